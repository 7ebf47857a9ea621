"""Config management plugins as local processes: Argo CD's plugin.yaml, selection by name or
discovery, its environment, init then generate in a scratch copy, the output stream read
with Headway's loader, and failures that keep the plugin's stderr."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from headway import child_process
from headway.model.diagnostics import Severity
from headway.source.errors import RenderError
from headway.source.git import GitCache
from headway.source.plugins import PluginCatalog, PluginConfigError, load_plugins, parse_plugin
from headway.source.render import RenderCache, RenderRequest, RenderResult, render, source_type
from headway.source.spec import ApplicationSource
from headway.source.tree import FilesystemTree
from polling import wait_for
from source.gitrepos import make_upstream

_CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n"


def _plugin(directory: Path, name: str, spec: str) -> None:
    (directory / name).mkdir(parents=True, exist_ok=True)
    head = "apiVersion: argoproj.io/v1alpha1\nkind: ConfigManagementPlugin\n"
    text = f"{head}metadata:\n  name: {name}\nspec:\n"
    (directory / name / "plugin.yaml").write_text(text + textwrap.indent(spec, "  "))


def _printing(directory: Path, name: str) -> str:
    """A `generate` that prints one ConfigMap called `name` (kept in a file beside)."""
    out = directory / f"{name}.out.yaml"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(_CM.format(name=name))
    return f"generate:\n  command: [cat, '{out}']\n"


def _repo(root: Path, files: dict[str, str]) -> FilesystemTree:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return FilesystemTree(root)


def _request(
    tree: FilesystemTree, catalog: PluginCatalog, plugin: dict[str, object] | None
) -> RenderRequest:
    source: ApplicationSource = {
        "repoURL": "https://git.example/infra.git",
        "targetRevision": "main",
        "path": "apps/web",
    }
    if plugin is not None:
        source["plugin"] = plugin  # type: ignore[typeddict-item]
    return RenderRequest(
        source=source,
        tree=tree,
        app_name="web",
        namespace="shop",
        project="team",
        revision="89abcdef0123456789abcdef0123456789abcdef",
        plugins=catalog,
    )


def _errors(result: RenderResult) -> list[str]:
    return [str(d) for d in result.diagnostics if d.severity is Severity.ERROR]


@pytest.fixture
def plugins_dir(tmp_path: Path) -> Path:
    return tmp_path / "plugins"


def test_init_then_generate_in_the_app_directory_with_argo_cds_environment(
    tmp_path: Path, plugins_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """init's files are there for generate; a sibling directory of the repository is readable
    (Argo CD sends the whole repository); Headway's own secrets are not passed on."""
    monkeypatch.setenv("HEADWAY_TEST_SECRET", "hunter2")
    _plugin(
        plugins_dir,
        "envdump",
        """\
init:
  command: [sh, -c]
  args: ["cat ../../shared/base.yaml > rendered.yaml"]
generate:
  command: [sh, -c, 'cat rendered.yaml; echo ---; env > env.txt; python3 ../../dump.py']
""",
    )
    dump = (
        "import json, os\n"
        "data = {k: v for k, v in os.environ.items() if k != 'PWD'}\n"
        "print(json.dumps({'apiVersion': 'v1', 'kind': 'ConfigMap',"
        " 'metadata': {'name': 'env'}, 'data': data}))\n"
    )
    tree = _repo(
        tmp_path / "repo",
        {"shared/base.yaml": _CM.format(name="base"), "dump.py": dump, "apps/web/x": ""},
    )
    plugin = {
        "name": "envdump",
        "env": [{"name": "GREETING", "value": "hi $ARGOCD_APP_NAME"}],
        "parameters": [
            {"name": "image-tag", "string": "v2"},
            {"name": "limits", "map": {"cpu": "1", "memory.max": "2Gi"}},
            {"name": "hosts", "array": ["a.example", "b.example"]},
        ],
    }
    result = render(_request(tree, load_plugins(plugins_dir), plugin))
    assert _errors(result) == []
    base, env = result.documents
    assert base.name == "base" and base.file == "plugin envdump output for apps/web"
    data = env.obj["data"]
    assert {k: v for k, v in data.items() if k.startswith(("ARGOCD_", "PARAM_", "KUBE_"))} == {
        "ARGOCD_APP_NAME": "web",
        "ARGOCD_APP_NAMESPACE": "shop",
        "ARGOCD_APP_PROJECT_NAME": "team",
        "ARGOCD_APP_REVISION": "89abcdef0123456789abcdef0123456789abcdef",
        "ARGOCD_APP_REVISION_SHORT": "89abcde",
        "ARGOCD_APP_REVISION_SHORT_8": "89abcdef",
        "ARGOCD_APP_SOURCE_PATH": "apps/web",
        "ARGOCD_APP_SOURCE_REPO_URL": "https://git.example/infra.git",
        "ARGOCD_APP_SOURCE_TARGET_REVISION": "main",
        "ARGOCD_ENV_GREETING": "hi web",
        "ARGOCD_APP_PARAMETERS": json.dumps(
            plugin["parameters"], sort_keys=True, separators=(",", ":")
        ),
        "PARAM_IMAGE_TAG": "v2",
        "PARAM_LIMITS_CPU": "1",
        "PARAM_LIMITS_MEMORY_MAX": "2Gi",
        "PARAM_HOSTS_0": "a.example",
        "PARAM_HOSTS_1": "b.example",
        "KUBE_VERSION": "",
        "KUBE_API_VERSIONS": "",
    }
    assert "HEADWAY_TEST_SECRET" not in data and data["PATH"] == os.environ["PATH"]
    assert not (tmp_path / "repo" / "apps" / "web" / "rendered.yaml").exists()  # a scratch copy


def test_a_plugin_yaml_error_names_the_file_line_and_field(plugins_dir: Path) -> None:
    _plugin(plugins_dir, "broken", "generate:\n  command: sh -c 'echo hi'\n")
    with pytest.raises(PluginConfigError) as caught:
        load_plugins(plugins_dir)
    assert str(caught.value) == (
        f"{plugins_dir}/broken/plugin.yaml:7: spec.generate.command: must be a list of strings"
    )
    with pytest.raises(
        PluginConfigError, match=r"plugin.yaml:2: kind: must be ConfigManagementPlugin"
    ):
        parse_plugin("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", "plugin.yaml")
    with pytest.raises(PluginConfigError, match=r"spec.generate.command: must name the program"):
        parse_plugin(
            "kind: ConfigManagementPlugin\nmetadata: {name: x}\nspec: {init: {command: [a]}}\n",
            "plugin.yaml",
        )


def test_a_versioned_plugin_is_named_name_dash_version(tmp_path: Path, plugins_dir: Path) -> None:
    _plugin(plugins_dir, "kasane", "version: v1.0\n" + _printing(tmp_path, "v"))
    catalog = load_plugins(plugins_dir)
    tree = _repo(tmp_path / "repo", {"apps/web/Kasanefile": "layers: []\n"})
    assert [d.name for d in render(_request(tree, catalog, {"name": "kasane-v1.0"})).documents] == [
        "v"
    ]
    with pytest.raises(RenderError) as caught:
        render(_request(tree, catalog, {"name": "kasane"}))
    assert "source.plugin.name: no plugin 'kasane'" in str(caught.value)
    assert "a plugin with a version is named name-version: kasane-v1.0" in str(caught.value)


def test_discovery_by_file_name_glob_and_command(tmp_path: Path, plugins_dir: Path) -> None:
    def printing(name: str) -> str:
        return _printing(tmp_path / "outputs", name)

    _plugin(plugins_dir, "a-nix", printing("nix") + "discover:\n  fileName: '*.nix'\n")
    _plugin(
        plugins_dir, "b-deep", printing("deep") + "discover:\n  find:\n    glob: '**/deep.cue'\n"
    )
    _plugin(
        plugins_dir,
        "c-command",
        printing("cmd") + "discover:\n  find:\n    command: [sh, -c, 'ls marker 2>/dev/null']\n",
    )
    _plugin(plugins_dir, "d-named-only", printing("named"))
    catalog = load_plugins(plugins_dir)

    def rendered(files: dict[str, str], plugin: dict[str, object] | None) -> list[str]:
        root = tmp_path / f"repo{len(list(tmp_path.iterdir()))}"
        request = _request(_repo(root, files), catalog, plugin)
        return [d.name for d in render(request).documents]

    assert rendered({"apps/web/flake.nix": "{}", "apps/web/marker": ""}, {}) == ["nix"]
    with pytest.raises(RenderError, match=r"no plugin's discover rules match apps/web"):
        rendered({"apps/web/sub/flake.nix": "{}"}, {})  # fileName stays in the app directory
    assert rendered({"apps/web/a/b/deep.cue": ""}, {}) == ["deep"]
    assert rendered({"apps/web/marker": ""}, None) == ["cmd"]  # no section: plugins first
    assert rendered({"apps/web/x.yaml": _CM.format(name="plain")}, None) == ["plain"]
    assert rendered({"apps/web/x.yaml": ""}, {"name": "d-named-only"}) == ["named"]
    with pytest.raises(
        RenderError,
        match=r"plugin 'a-nix' does not support apps/web: its discover rules "
        r"\(discover.fileName '\*.nix'\) match nothing",
    ):
        rendered({"apps/web/x.yaml": ""}, {"name": "a-nix"})
    with pytest.raises(RenderError, match=r"no plugin's discover rules match apps/web"):
        rendered({"apps/web/x.yaml": ""}, {})


def test_a_failing_command_keeps_its_stderr(tmp_path: Path, plugins_dir: Path) -> None:
    _plugin(
        plugins_dir,
        "fails",
        "init:\n  command: [sh, -c, 'echo missing values.yaml >&2; exit 3']\n"
        "generate:\n  command: ['true']\n",
    )
    tree = _repo(tmp_path / "repo", {"apps/web/x": ""})
    with pytest.raises(RenderError) as caught:
        render(_request(tree, load_plugins(plugins_dir), {"name": "fails"}))
    assert str(caught.value) == (
        "plugin fails: init `sh -c echo missing values.yaml >&2; exit 3` exited with 3: "
        "missing values.yaml"
    )


def test_a_command_past_the_timeout_is_stopped(tmp_path: Path, plugins_dir: Path) -> None:
    """The whole process group goes: a child the plugin's shell left running too."""
    pid_file = tmp_path / "sleep.pid"
    script = f"echo starting >&2; sleep 60 & echo $! > {pid_file}; wait"
    _plugin(plugins_dir, "hangs", f"generate:\n  command: [sh, -c, '{script}']\n")
    tree = _repo(tmp_path / "repo", {"apps/web/x": ""})
    catalog = load_plugins(plugins_dir, timeout_seconds=1)
    with pytest.raises(RenderError) as caught:
        render(_request(tree, catalog, {"name": "hangs"}))
    assert str(caught.value) == (
        f"plugin hangs: generate `sh -c {script}` did not finish in time (stopped): starting"
    )
    sleeper = Path(f"/proc/{pid_file.read_text().strip()}/stat")
    wait_for(
        lambda: not sleeper.exists() or sleeper.read_text().split(") ")[1][0] in "ZX",
        timeout=10,
        what="the plugin's background sleep stopped",
    )


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        (
            _CM.format(name="ok") + "---\n- just\n- a list\n",
            "plugin bad output for apps/web:6: document 2 is not a Kubernetes object",
        ),
        ("kind: [\n", "plugin bad output for apps/web:2:"),
        ("", "plugin bad output for apps/web:1: the plugin printed no objects"),
    ],
)
def test_bad_output_is_an_error_at_its_stream_position(
    tmp_path: Path, plugins_dir: Path, output: str, expected: str
) -> None:
    (tmp_path / "out.yaml").write_text(output)
    _plugin(plugins_dir, "bad", f"generate:\n  command: [cat, '{tmp_path / 'out.yaml'}']\n")
    tree = _repo(tmp_path / "repo", {"apps/web/x": ""})
    result = render(_request(tree, load_plugins(plugins_dir), {"name": "bad"}))
    assert not result.ok
    assert _errors(result)[0].startswith(expected)


def test_file_modes_follow_preserve_file_mode(tmp_path: Path, plugins_dir: Path) -> None:
    """Argo CD's stream writes every file 0644 unless the plugin preserves modes."""
    script = f"#!/bin/sh\nprintf '{_CM.format(name='ran')}'\n"
    tree = _repo(tmp_path / "repo", {"apps/web/gen.sh": script})
    (tmp_path / "repo" / "apps/web/gen.sh").chmod(0o755)
    _plugin(plugins_dir, "plain", "generate:\n  command: [./gen.sh]\n")
    _plugin(plugins_dir, "modes", "preserveFileMode: true\ngenerate:\n  command: [./gen.sh]\n")
    catalog = load_plugins(plugins_dir)
    with pytest.raises(RenderError, match=r"plugin plain: generate `./gen.sh` could not start"):
        render(_request(tree, catalog, {"name": "plain"}))
    assert [d.name for d in render(_request(tree, catalog, {"name": "modes"})).documents] == ["ran"]


def test_rendered_once_per_revision_and_parameters(tmp_path: Path, plugins_dir: Path) -> None:
    runs = tmp_path / "runs.log"
    out = _printing(tmp_path, "c").split("'")[1]
    _plugin(
        plugins_dir, "counted", f"generate:\n  command: [sh, -c, 'echo run >> {runs}; cat {out}']\n"
    )
    catalog = load_plugins(plugins_dir)
    up = make_upstream(tmp_path / "up.git", {"apps/web/x": "1"})
    repo = GitCache(tmp_path / "cache").repository(up.url)
    repo.fetch()
    cache = RenderCache()

    def render_at(sha: str, tag: str) -> None:
        source: ApplicationSource = {
            "path": "apps/web",
            "plugin": {"name": "counted", "parameters": [{"name": "tag", "string": tag}]},  # type: ignore[typeddict-item]
        }
        request = RenderRequest(
            source=source, tree=repo.tree(sha), app_name="web", revision=sha, plugins=catalog
        )
        assert cache.render(request).ok

    first = up.tip("main")
    render_at(first, "v1")
    render_at(first, "v1")
    render_at(first, "v2")
    second = up.commit("main", {"README": "docs only"})
    repo.fetch()
    render_at(second, "v2")
    assert runs.read_text().count("run") == 3
    assert (cache.hits, cache.misses) == (1, 3)


def test_a_plugin_section_without_plugins_is_an_error_not_a_directory(tmp_path: Path) -> None:
    tree = _repo(tmp_path / "repo", {"apps/web/cm.yaml": _CM.format(name="plain")})
    request = _request(tree, PluginCatalog(), {"name": "envsubst"})
    assert source_type(request) == "Plugin"
    with pytest.raises(RenderError, match=r"no plugin 'envsubst' \(no plugins are configured"):
        render(request)


def test_the_cli_default_timeout_is_the_loaders() -> None:
    """The CLI keeps its own copy so that --help does not import the loader."""
    from headway.cli.plugin_options import DEFAULT_PLUGIN_TIMEOUT_SECONDS
    from headway.source.plugins import DEFAULT_TIMEOUT_SECONDS

    assert DEFAULT_PLUGIN_TIMEOUT_SECONDS == DEFAULT_TIMEOUT_SECONDS


def test_a_find_command_sees_argo_cds_environment_and_runs_once_per_tree(
    tmp_path: Path, plugins_dir: Path
) -> None:
    """A source with no type asks discovery on every render lookup; the command runs once
    per plugin, tree, path and environment, not once per lookup."""
    runs = tmp_path / "finds.log"
    find = f'echo "$ARGOCD_APP_NAME" >> {runs}; ls marker'
    _plugin(
        plugins_dir,
        "found",
        _printing(tmp_path, "found") + f"discover:\n  find:\n    command: [sh, -c, '{find}']\n",
    )
    tree = _repo(tmp_path / "repo", {"apps/web/marker": ""})
    request = _request(tree, load_plugins(plugins_dir), None)
    cache = RenderCache()
    for _ in range(3):
        assert [d.name for d in cache.render(request).documents] == ["found"]
    assert runs.read_text() == "web\n"


def test_a_plugin_command_starts_through_setpriv_without_a_preexec_fn(
    tmp_path: Path, plugins_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It dies with Headway (setpriv's parent-death signal), and no Python runs in the child
    between fork and exec, where a lock another render thread held could deadlock it."""
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("util-linux setpriv missing")
    started: list[tuple[list[str], dict[str, object]]] = []
    real_popen = subprocess.Popen

    def spy(argv: list[str], **kwargs: object) -> subprocess.Popen[bytes]:
        started.append((list(argv), dict(kwargs)))
        return real_popen(argv, **kwargs)  # type: ignore[call-overload, no-any-return]

    monkeypatch.setattr(subprocess, "Popen", spy)
    _plugin(plugins_dir, "printing", _printing(tmp_path, "made"))
    tree = _repo(tmp_path / "repo", {"apps/web/x": ""})
    result = render(_request(tree, load_plugins(plugins_dir), {"name": "printing"}))
    assert [d.name for d in result.documents] == ["made"]
    [(argv, kwargs)] = started
    assert argv[:4] == [setpriv, "--pdeathsig", "KILL", "--"] and argv[4] == "cat"
    assert kwargs.get("preexec_fn") is None


def test_without_setpriv_a_plugin_command_still_starts_without_a_preexec_fn(
    tmp_path: Path, plugins_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where setpriv is missing, a Python program of its own sets the parent-death signal and
    execs the command (before, a `preexec_fn` ran the parent's Python in the forked child)."""
    monkeypatch.setattr(child_process, "SETPRIV", None)
    started: list[tuple[list[str], dict[str, object]]] = []
    real_popen = subprocess.Popen

    def spy(argv: list[str], **kwargs: object) -> subprocess.Popen[bytes]:
        started.append((list(argv), dict(kwargs)))
        return real_popen(argv, **kwargs)  # type: ignore[call-overload, no-any-return]

    monkeypatch.setattr(subprocess, "Popen", spy)
    _plugin(plugins_dir, "printing", _printing(tmp_path, "made"))
    tree = _repo(tmp_path / "repo", {"apps/web/x": ""})
    result = render(_request(tree, load_plugins(plugins_dir), {"name": "printing"}))
    assert [d.name for d in result.documents] == ["made"]
    [(argv, kwargs)] = started
    assert argv[0] == sys.executable and "cat" in argv
    assert kwargs.get("preexec_fn") is None
    _plugin(plugins_dir, "missing", "generate:\n  command: [no-such-generator]\n")
    with pytest.raises(RenderError, match=r"could not start: .*No such file or directory"):
        render(_request(tree, load_plugins(plugins_dir), {"name": "missing"}))
    assert len(started) == 1  # a command that cannot exec is never started
