"""`headway check` and `headway serve` render every example and check fixture the same way.

The check side reads the working files through `RepositoryLoader`; the serve side commits the
same files to a Git repository and renders each Application through `SourceReader`, the
controller's reader (Git cache, tree at a commit, render cache). Both must produce the same
objects, or both must refuse the source.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from check.conftest import FIXTURES, SELF_URL
from check.gitrepo import commit_states
from headway.check.context import AppUnit
from headway.check.manifest import app_sources
from headway.check.registry import run_checks
from headway.cli.check_loader import RepositoryLoader, normalize_url
from headway.clock import VirtualClock
from headway.controllers.app.sources import SourceReader
from headway.model.application import parse_application
from headway.source.git import GitCache
from headway.source.tree import FilesystemTree

EXAMPLES = Path(__file__).parents[2] / "examples"
GITOPS_URL = "https://git.example.com/headway-demo/gitops-repo.git"
DEMO_URL = "__REPO_URL__"


def _cases() -> list[tuple[str, Path, str]]:
    fixture_dirs = sorted(p.parent for p in FIXTURES.rglob("*.yaml") if p.parent.is_dir())
    roots = sorted({_case_root(p) for p in fixture_dirs})
    cases = [(str(r.relative_to(FIXTURES)), r, SELF_URL) for r in roots]
    cases.append(("examples/gitops-repo", EXAMPLES / "gitops-repo", GITOPS_URL))
    cases.append(("examples/demo", EXAMPLES / "demo", DEMO_URL))
    return cases


def _case_root(directory: Path) -> Path:
    """The fixture state directory (`HWnnn/found`, `repos/clean`) holding `directory`."""
    relative = directory.relative_to(FIXTURES)
    return FIXTURES.joinpath(*relative.parts[:2])


def _prepare(name: str, root: Path, tmp_path: Path) -> Path:
    """The files as one repository: the demo's Application goes next to its `repo/`."""
    work = tmp_path / "state"
    if name == "examples/demo":
        shutil.copytree(root / "repo", work)
        shutil.copy(root / "application.yaml", work / "application.yaml")
    else:
        shutil.copytree(root, work)
    return work


def _has_plugin(unit: AppUnit) -> bool:
    """A plugin source: check reports it through validate (HW003), serve as an error."""
    assert unit.application is not None
    return any("plugin" in source for source in app_sources(unit.application.obj))


def _canonical(objects: list[Any]) -> list[str]:
    return sorted(json.dumps(o, sort_keys=True, default=str) for o in objects)


def _served(unit: AppUnit, reader: SourceReader, self_url: str, remote: str) -> Any:
    """What the controller renders for `unit`'s Application, the repository at `remote`."""
    assert unit.application is not None
    app, problems = parse_application(unit.application)
    if app is None:
        pytest.skip(f"{unit.name} is not a valid Application: {problems[0]}")
    raw = json.loads(json.dumps(unit.application.obj))
    for source in app_sources(raw):
        if normalize_url(str(source.get("repoURL", ""))) == normalize_url(self_url):
            source["repoURL"] = remote
            source["targetRevision"] = "HEAD"
    return reader.desired(app, raw)


@pytest.mark.parametrize(("name", "root", "self_url"), _cases(), ids=[c[0] for c in _cases()])
def test_check_and_serve_render_alike(name: str, root: Path, self_url: str, tmp_path: Path) -> None:
    work = _prepare(name, root, tmp_path)
    loader = RepositoryLoader(
        tree=FilesystemTree(work), self_urls=frozenset({normalize_url(self_url)})
    )
    context = loader.load()
    refused = {problem.app.name for problem in context.unresolved}
    refused |= {u.name for u in context.applications if _has_plugin(u)}
    commit_states(tmp_path / "remote", work)
    reader = SourceReader(git=GitCache(tmp_path / "cache"), clock=VirtualClock())
    remote = (tmp_path / "remote").as_uri()
    compared = 0
    for unit in context.applications:
        assert unit.application is not None
        sources = app_sources(unit.application.obj)
        urls = {normalize_url(str(s.get("repoURL", ""))) for s in sources}
        if urls != {normalize_url(self_url)}:
            continue  # another repository: neither side can read it here
        served = _served(unit, reader, self_url, remote)
        assert bool(served.errors) == (unit.name in refused), (unit.name, served.errors)
        if not served.errors:
            check_objects = [d.obj for d in unit.objects]
            assert _canonical(check_objects) == _canonical(list(served.objects)), unit.name
        compared += 1
    if name.startswith("examples/"):
        assert compared >= 1


def test_directory_options_render_as_argo_cd_does() -> None:
    """The glob and directory semantics both sides now share are Argo CD's (gobwas/glob with
    no separator, matched against the path relative to the app path)."""
    root = FIXTURES / "repos" / "directory-options"
    loader = RepositoryLoader(
        tree=FilesystemTree(root), self_urls=frozenset({normalize_url(SELF_URL)})
    )
    context = loader.load()
    names = {
        unit.name: sorted(str(d.obj["metadata"]["name"]) for d in unit.objects)
        for unit in context.applications
    }
    assert names["exclude-exact"] == ["settings", "sub-config"]
    assert names["nested-braces"] == ["alpha", "why"]
    assert names["any-extension"] == ["text-object"]
    # Jsonnet beside YAML: both render, as Argo CD does
    assert names["jsonnet"] == ["from-jsonnet", "plain"]
    assert [u.app.name for u in context.unresolved] == ["plugin"]
    # a plugin source with no such plugin configured: an unresolved source, not a directory
    [plugin] = [f for f in run_checks(context) if f.rule == "HW002"]
    assert plugin.file == "apps/plugin.yaml"
    assert "source.plugin.name: no plugin 'envsubst'" in plugin.message
