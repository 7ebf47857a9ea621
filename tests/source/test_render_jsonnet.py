"""Jsonnet in directory sources: Argo CD's extVars, TLAs, libs and import order, its output
rules, errors at the Jsonnet file and line, and imports kept inside the repository."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from headway.model.diagnostics import Diagnostic, Severity
from headway.source import tools
from headway.source.build_env import envsubst
from headway.source.errors import ToolNotInstalled
from headway.source.git import GitCache
from headway.source.render import RenderCache, RenderRequest, RenderResult, render
from headway.source.spec import ApplicationSource
from headway.source.tree import FilesystemTree
from source.gitrepos import make_upstream, require_extra


@pytest.fixture(autouse=True, params=["_gojsonnet", "_jsonnet"])
def implementation(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test runs on go-jsonnet (the extra, as Argo CD evaluates) and, where it is
    installed, on the C++ implementation Headway falls back to."""
    module: str = request.param
    if module == "_gojsonnet":
        require_extra(module, "jsonnet")
    elif importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} (PyPI jsonnet) is not installed")
    other = {"_gojsonnet": "_jsonnet", "_jsonnet": "_gojsonnet"}[module]
    real = importlib.util.find_spec

    def find_spec(name: str, *args: object) -> object:
        return None if name == other else real(name)

    monkeypatch.setattr(tools.importlib.util, "find_spec", find_spec)
    return module


def _write(root: Path, files: dict[str, str]) -> FilesystemTree:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return FilesystemTree(root)


def _render(tree: FilesystemTree, jsonnet: dict[str, object] | None = None) -> RenderResult:
    source: ApplicationSource = {"repoURL": "https://git.example/infra.git", "path": "apps/web"}
    if jsonnet is not None:
        source["directory"] = {"jsonnet": jsonnet}  # type: ignore[typeddict-item]
    request = RenderRequest(
        source=source, tree=tree, app_name="web", namespace="shop", revision="0123456789abcdef"
    )
    return render(request)


def _errors(result: RenderResult) -> list[Diagnostic]:
    return [d for d in result.diagnostics if d.severity is Severity.ERROR]


def test_ext_vars_and_tlas_as_strings_and_code(tmp_path: Path) -> None:
    main = (
        "function(replicas, image='default') { apiVersion: 'v1', kind: 'ConfigMap', "
        "metadata: { name: std.extVar('name') }, "
        "data: { replicas: std.toString(replicas * 2), image: image, "
        "limit: std.toString(std.extVar('limit') + 1) } }"
    )
    tree = _write(tmp_path, {"apps/web/main.jsonnet": main})
    result = _render(
        tree,
        {
            "extVars": [
                {"name": "name", "value": "settings"},
                {"name": "limit", "value": "40", "code": True},
            ],
            "tlas": [
                {"name": "replicas", "value": "3", "code": True},
                {"name": "image", "value": "web:2"},
            ],
        },
    )
    assert _errors(result) == []
    [doc] = result.documents
    assert doc.name == "settings" and doc.file == "apps/web/main.jsonnet"
    assert doc.obj["data"] == {"replicas": "6", "image": "web:2", "limit": "41"}


def test_values_name_argo_cds_build_environment(tmp_path: Path) -> None:
    main = (
        "{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: std.extVar('app') }, "
        "data: { rev: std.extVar('rev'), literal: std.extVar('literal') } }"
    )
    tree = _write(tmp_path, {"apps/web/main.jsonnet": main})
    ext_vars = [
        {"name": "app", "value": "${ARGOCD_APP_NAME}-$ARGOCD_APP_NAMESPACE"},
        {"name": "rev", "value": "$ARGOCD_APP_REVISION_SHORT@$ARGOCD_APP_SOURCE_PATH"},
        {"name": "literal", "value": "$$HOME costs $5 $UNKNOWN."},
    ]
    [doc] = _render(tree, {"extVars": ext_vars}).documents
    assert doc.name == "web-shop"
    assert doc.obj["data"] == {"rev": "0123456@apps/web", "literal": "$HOME costs  ."}


def test_envsubst_follows_go_os_expand() -> None:
    env = {"A": "x", "B_2": "y"}
    assert envsubst("$A/${B_2}/$$/${}/${A/$ end", env) == "x/y/$//A/$ end"
    assert envsubst("${*}$1", env) == ""
    assert envsubst("$", env) == "$"


def test_imports_beside_the_file_then_libs_last_first_then_the_app_directory(
    tmp_path: Path,
) -> None:
    tree = _write(
        tmp_path,
        {
            "apps/web/main.jsonnet": (
                "local a = import 'params.libsonnet'; local b = import 'shared.libsonnet';"
                "local c = import 'only-app.libsonnet';"
                "[{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: a.name },"
                "   data: { shared: b.from, app: c.from } }]"
            ),
            "apps/web/params.libsonnet": "{ name: 'beside' }",
            "apps/web/only-app.libsonnet": "{ from: 'app' }",
            "vendor/one/shared.libsonnet": "{ from: 'one' }",
            "vendor/two/shared.libsonnet": "{ from: 'two' }",
            "vendor/two/params.libsonnet": "{ name: 'from-lib' }",
        },
    )
    result = _render(tree, {"libs": ["vendor/one", "/vendor/two"]})
    assert _errors(result) == []
    [doc] = result.documents
    assert doc.name == "beside"
    assert doc.obj["data"] == {"shared": "two", "app": "app"}


def test_an_array_gives_each_object_and_anything_else_is_an_error(tmp_path: Path) -> None:
    pair = "[{apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: n}} for n in ['a', 'b']]"
    tree = _write(tmp_path, {"apps/web/pair.jsonnet": pair, "apps/web/z.jsonnet": "[1]"})
    result = _render(tree)
    assert [d.name for d in result.documents] == ["a", "b"]
    [error] = _errors(result)
    assert error.file == "apps/web/z.jsonnet"
    assert "element 0 of the output array is a int; it must be a Kubernetes object" in str(error)


def test_a_syntax_error_names_the_file_and_line(tmp_path: Path) -> None:
    tree = _write(tmp_path, {"apps/web/main.jsonnet": "{\n  a: 1,\n  b: ,\n}\n"})
    [error] = _errors(_render(tree))
    assert (error.file, error.line) == ("apps/web/main.jsonnet", 3)
    assert error.message.startswith("Jsonnet evaluation of apps/web/main.jsonnet failed: ")


def test_an_error_in_a_library_names_the_library_line(tmp_path: Path) -> None:
    tree = _write(
        tmp_path,
        {
            "apps/web/main.jsonnet": "local lib = import 'lib/helpers.libsonnet'; lib.build()",
            "lib/helpers.libsonnet": "{\n  build():: error 'replicas must be set',\n}\n",
        },
    )
    [error] = _errors(_render(tree, {"libs": ["."]}))
    assert (error.file, error.line) == ("lib/helpers.libsonnet", 2)
    assert "replicas must be set" in error.message


def test_a_missing_ext_var_is_an_error_not_an_empty_render(tmp_path: Path) -> None:
    tree = _write(tmp_path, {"apps/web/main.jsonnet": "{ kind: std.extVar('kind') }"})
    result = _render(tree)
    assert result.documents == () and not result.ok
    assert "undefined external variable: kind" in _errors(result)[0].message.lower()


@pytest.mark.parametrize(
    ("imported", "reason"),
    [
        ("/etc/hostname", "/etc/hostname is outside the repository"),
        ("../../../outside.libsonnet", "../../../outside.libsonnet leaves the repository"),
        ("escape.libsonnet", "escape.libsonnet is a symlink to"),
    ],
)
def test_imports_that_leave_the_repository_are_refused(
    tmp_path: Path, imported: str, reason: str
) -> None:
    """Argo CD's importer reads any file the repo server can (an absolute path, `../` past
    the checkout, a symlink out of it); Headway reads only the repository."""
    (tmp_path / "outside.libsonnet").write_text("{ secret: 'host file' }")
    repo = tmp_path / "repo"
    tree = _write(repo, {"apps/web/main.jsonnet": f"\n(import '{imported}').secret\n"})
    (repo / "apps/web/escape.libsonnet").symlink_to(tmp_path / "outside.libsonnet")
    result = _render(tree)
    assert result.documents == ()
    [error] = _errors(result)
    assert (error.file, error.line) == ("apps/web/main.jsonnet", 2)
    assert reason in error.message


def test_without_the_library_the_error_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tools.importlib.util, "find_spec", lambda name, *args: None)
    tree = _write(tmp_path, {"apps/web/main.jsonnet": "{}"})
    with pytest.raises(ToolNotInstalled, match=r"pip install 'headway\[jsonnet\]'"):
        _render(tree)


def test_a_library_change_outside_the_app_path_renders_again(tmp_path: Path) -> None:
    """A Jsonnet render reads more than its own directory, so its cache key covers the
    repository at the commit; a YAML-only directory keeps keying on its own path."""
    up = make_upstream(
        tmp_path / "up.git",
        {
            "apps/web/main.jsonnet": "(import 'lib/cm.libsonnet') { metadata+: {name: 'web'} }",
            "lib/cm.libsonnet": "{ apiVersion: 'v1', kind: 'ConfigMap', data: {v: '1'} }",
        },
    )
    repo = GitCache(tmp_path / "cache").repository(up.url)
    repo.fetch()
    cache = RenderCache()

    def data_at(sha: str) -> object:
        source: ApplicationSource = {
            "path": "apps/web",
            "directory": {"jsonnet": {"libs": ["."]}},  # type: ignore[typeddict-item]
        }
        request = RenderRequest(source=source, tree=repo.tree(sha), app_name="web", revision=sha)
        [doc] = cache.render(request).documents
        return doc.obj["data"]

    assert data_at(up.tip("main")) == {"v": "1"}
    up.commit(
        "main", {"lib/cm.libsonnet": "{ apiVersion: 'v1', kind: 'ConfigMap', data: {v: '2'} }"}
    )
    repo.fetch()
    assert data_at(up.tip("main")) == {"v": "2"}
    assert (cache.hits, cache.misses) == (0, 2)
    data_at(up.tip("main"))
    assert cache.hits == 1


def test_a_missing_import_is_said_whole_in_every_file_that_makes_it(tmp_path: Path) -> None:
    """go-jsonnet's Python binding (0.22) read an import callback's error message past its
    end: of argo-cd's test/e2e/testdata/ksonnet environments, each importing a library that is
    not beside it, the second file's error carried the tail of the first's message and the
    third was reported as "not UTF-8 text" though the file is ASCII. Each refusal is now said
    in Headway's words, at the import's line, once per place looked at."""
    tree = _write(
        tmp_path,
        {
            "apps/web/a-first.jsonnet": "\n\nimport 'settings-for-every-environment.libsonnet'",
            "apps/web/b.jsonnet": "import 's.libsonnet'",
            "apps/web/c.jsonnet": "{}\n+ (import 'x.libsonnet')",
        },
    )
    errors = _errors(_render(tree))
    assert [(e.file, e.line) for e in errors] == [
        ("apps/web/a-first.jsonnet", 3),
        ("apps/web/b.jsonnet", 1),
        ("apps/web/c.jsonnet", 2),
    ]
    for error, name in zip(errors, ["settings-for-every-environment", "s", "x"], strict=True):
        looked = f"not found in the repository (looked at apps/web/{name}.libsonnet)"
        assert f"couldn't import '{name}.libsonnet': {looked}" in error.message
        assert error.message.split(looked)[1].startswith("; apps/web/")  # the trace, no junk
