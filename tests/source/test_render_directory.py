"""Directory apps: recurse, include/exclude globs, non-manifest files; and the render cache."""

from __future__ import annotations

from pathlib import Path

import pytest

from headway.model.diagnostics import Severity
from headway.source.errors import RenderError
from headway.source.git import GitCache, GitRepository
from headway.source.globs import glob_matches
from headway.source.render import RenderCache, RenderRequest, render, source_type
from headway.source.spec import ApplicationSource
from headway.source.tree import FilesystemTree
from source.gitrepos import Upstream, make_upstream

_CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n"
FILES = {
    "apps/web/a.yaml": _CM.format(name="a"),
    "apps/web/b.yml": _CM.format(name="b") + "---\n" + _CM.format(name="b2"),
    "apps/web/c.json": '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}',
    "apps/web/notes.txt": "not yaml",
    "apps/web/extra.manifest": _CM.format(name="extra"),
    "apps/web/.hidden.yaml": _CM.format(name="hidden"),
    "apps/web/tool-config.yaml": "lint:\n  strict: true\n",
    "apps/web/skip.yaml": "# +argocd:skip-file-rendering\n" + _CM.format(name="skipped"),
    "apps/web/sub/d.yaml": _CM.format(name="d"),
    "apps/web/sub/deeper/e.yaml": _CM.format(name="e"),
    "apps/web/sub/test-f.yaml": _CM.format(name="f"),
}


@pytest.fixture
def up(tmp_path: Path) -> Upstream:
    return make_upstream(tmp_path / "dir.git", FILES)


@pytest.fixture
def repo(up: Upstream, cache: GitCache) -> GitRepository:
    repo = cache.repository(up.url)
    repo.fetch()
    return repo


def _names(repo: GitRepository, directory: dict[str, object] | None = None) -> list[str]:
    source: ApplicationSource = {"path": "apps/web"}
    if directory is not None:
        source["directory"] = directory  # type: ignore[typeddict-item]
    result = render(RenderRequest(source=source, tree=repo.tree("main"), app_name="web"))
    assert result.ok, result.diagnostics
    return sorted(doc.name for doc in result.documents)


def test_top_level_only_by_default(repo: GitRepository) -> None:
    assert _names(repo) == ["a", "b", "b2", "c", "hidden"]


def test_files_lines_and_warning_for_other_yaml(repo: GitRepository) -> None:
    request = RenderRequest(source={"path": "apps/web"}, tree=repo.tree("main"), app_name="web")
    assert source_type(request) == "Directory"
    result = render(request)
    b2 = next(doc for doc in result.documents if doc.name == "b2")
    assert (b2.file, b2.line) == ("apps/web/b.yml", 6)
    warnings = [d for d in result.diagnostics if d.severity is Severity.WARNING]
    assert [w.file for w in warnings] == ["apps/web/tool-config.yaml"]


def test_recurse(repo: GitRepository) -> None:
    assert _names(repo, {"recurse": True}) == ["a", "b", "b2", "c", "d", "e", "f", "hidden"]


@pytest.mark.parametrize(
    ("directory", "expected"),
    [
        ({"recurse": True, "include": "*.yml"}, ["b", "b2"]),
        ({"recurse": True, "include": "sub/*"}, ["d", "e", "f"]),
        ({"recurse": True, "include": "{a.yaml,sub/d.yaml}"}, ["a", "d"]),
        (
            {"recurse": True, "exclude": "{sub/deeper/*,*test-*}"},
            ["a", "b", "b2", "c", "d", "hidden"],
        ),
        ({"recurse": True, "include": "*.yaml", "exclude": "sub/*"}, ["a", "hidden"]),
        ({"recurse": False, "include": "sub/*"}, []),
        (
            {"disableExtensionFilter": True, "exclude": "*.txt"},
            ["a", "b", "b2", "c", "extra", "hidden"],
        ),
    ],
)
def test_include_exclude(
    repo: GitRepository, directory: dict[str, object], expected: list[str]
) -> None:
    assert _names(repo, directory) == expected


def test_manifest_looking_yaml_without_kind_is_an_error(up: Upstream, repo: GitRepository) -> None:
    up.commit("main", {"apps/web/broken.yaml": "apiVersion: v1\nmetadata:\n  name: x\n"})
    up.commit("main", {"apps/web/mixed.yaml": _CM.format(name="m") + "---\nfoo: bar\n"})
    repo.fetch()
    request = RenderRequest(source={"path": "apps/web"}, tree=repo.tree("main"), app_name="web")
    result = render(request)
    assert not result.ok
    errors = sorted((d.file, d.line) for d in result.diagnostics if d.severity is Severity.ERROR)
    assert errors == [("apps/web/broken.yaml", 1), ("apps/web/mixed.yaml", 6)]


def test_yaml_syntax_error_names_file_and_line(up: Upstream, repo: GitRepository) -> None:
    up.commit("main", {"apps/web/bad.yaml": _CM.format(name="x") + "  labels: [oops\n"})
    repo.fetch()
    result = render(RenderRequest({"path": "apps/web"}, repo.tree("main"), "web"))
    errors = [d for d in result.diagnostics if d.severity is Severity.ERROR]
    assert [e.file for e in errors] == ["apps/web/bad.yaml"] and errors[0].line >= 4


def test_bad_glob_and_missing_path_are_errors(repo: GitRepository) -> None:
    with pytest.raises(RenderError, match=r"directory\.include: invalid glob"):
        _names(repo, {"include": "{a,b"})
    with pytest.raises(RenderError, match="does not exist"):
        render(RenderRequest({"path": "apps/none"}, repo.tree("main"), "web"))
    with pytest.raises(RenderError, match="multiple application sources"):
        render(
            RenderRequest(
                {"path": "apps/web", "helm": {}, "directory": {}}, repo.tree("main"), "web"
            )
        )


def test_glob_semantics() -> None:
    assert glob_matches("*.yaml", "sub/x.yaml")  # `*` crosses `/`, as in Argo CD
    assert glob_matches("?.yaml", "a.yaml") and not glob_matches("?.yaml", "ab.yaml")
    assert glob_matches("[a-c].yaml", "b.yaml") and not glob_matches("[!a-c].yaml", "b.yaml")
    assert glob_matches("{a,b/{c,d}}.yaml", "b/d.yaml")
    assert glob_matches("\\*.yaml", "*.yaml") and not glob_matches("\\*.yaml", "x.yaml")


def test_cache_hits_until_the_path_changes(up: Upstream, repo: GitRepository) -> None:
    cache = RenderCache(max_entries=2)
    source: ApplicationSource = {"path": "apps/web", "targetRevision": "main"}
    first = cache.render(RenderRequest(source, repo.tree("main"), "web"))
    up.commit("main", {"README.md": "unrelated"})
    repo.fetch()
    again = cache.render(RenderRequest(source, repo.tree("main"), "web"))
    assert again is first and (cache.hits, cache.misses) == (1, 1)
    up.commit("main", {"apps/web/z.yaml": _CM.format(name="z")})
    repo.fetch()
    changed = cache.render(RenderRequest(source, repo.tree("main"), "web"))
    assert changed is not first and "z" in [d.name for d in changed.documents]
    other = cache.render(
        RenderRequest({**source, "directory": {"recurse": True}}, repo.tree("main"), "web")
    )
    assert len(other.documents) > len(changed.documents)
    assert len(cache) == 2  # LRU bound


def test_filesystem_tree_renders_the_same(tmp_path: Path, repo: GitRepository) -> None:
    for name, content in FILES.items():
        (tmp_path / "wc" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "wc" / name).write_text(content)
    local = render(RenderRequest({"path": "apps/web"}, FilesystemTree(tmp_path / "wc"), "web"))
    from_git = render(RenderRequest({"path": "apps/web"}, repo.tree("main"), "web"))
    assert [(d.file, d.obj) for d in local.documents] == [
        (d.file, d.obj) for d in from_git.documents
    ]


def test_make_upstream_helper_is_real(tmp_path: Path, cache: GitCache) -> None:
    up = make_upstream(tmp_path / "x.git", {"a.yaml": _CM.format(name="a")})
    repo = cache.repository(up.url)
    repo.fetch()
    assert repo.tree("HEAD").read("a.yaml").startswith(b"apiVersion")
