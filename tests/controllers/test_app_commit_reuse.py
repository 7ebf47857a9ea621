"""At a new commit, an app whose inputs the commit did not touch keeps its render (and
records the new revision), and an app whose inputs it touched is rendered again, wherever
those inputs lie: under its path, behind a symlink out of it, a Kustomize base, a Helm value
file outside the chart, another source's `$values`. Counted in render-cache misses and read
from the rendered objects, not timed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pygit2
import pytest
from app_harness import APPS_NS, Harness, application, config_map, make_harness, manifests, phase

from headway.clock import VirtualClock
from headway.controllers.app.sources import DesiredState, SourceReader
from headway.model.application import parse_application
from headway.model.yamlload import Document
from headway.source.git import GitCache
from headway.source.plugins import Command, Discover, PluginCatalog, PluginConfig
from source.gitrepos import require_extra
from system_programs import require_program


def desired(h: Harness, name: str) -> DesiredState:
    raw = h.app(name)
    parsed, _ = parse_application(Document(raw, "test", 0, 0))
    assert parsed is not None
    state = h.reader.desired(parsed, raw)
    assert not state.errors, state.errors
    return state


def data(state: DesiredState, name: str) -> dict[str, Any]:
    found = [o for o in state.objects if o["metadata"]["name"] == name]
    assert len(found) == 1, [o["metadata"]["name"] for o in state.objects]
    return dict(found[0].get("data") or {})


def commit(h: Harness, files: dict[str, str | None]) -> str:
    sha = h.remote.commit(files)
    h.reader.mark_changed(h.remote.url)
    return sha


def misses(h: Harness) -> int:
    return h.reader.render_cache.misses


def commit_link(h: Harness, path: str, target: str) -> str:
    """Commit a symlink at `path` leading to `target` (relative, as Git stores it)."""
    repo = h.remote.repo
    tip = repo.references["refs/heads/main"].peel(pygit2.Commit)
    index = pygit2.Index()
    index.read_tree(tip.tree)
    blob = repo.create_blob(target.encode())
    index.add(pygit2.IndexEntry(path, blob, pygit2.enums.FileMode.LINK))
    sig = pygit2.Signature("Dev", "dev@example.com")
    tree = index.write_tree(repo)
    return str(repo.create_commit("refs/heads/main", sig, sig, "link", tree, [tip.id]))


def test_a_commit_renders_again_only_the_app_under_the_changed_path(
    tmp_path: Path, clock: VirtualClock
) -> None:
    """`apps/web` is a prefix of `apps/web-canary`'s path: a change under one is not a
    change under the other, in either direction; both record every new revision."""
    files = {
        "apps/web/cm.yaml": manifests(config_map("web")),
        "apps/web-canary/cm.yaml": manifests(config_map("canary")),
    }
    h = make_harness(tmp_path, clock, files)
    for name, path in (("web", "apps/web"), ("canary", "apps/web-canary")):
        h.install(application(name, h.remote.url, path=path))
        desired(h, name)
    before = misses(h)

    sha = commit(
        h, {"apps/web-canary/cm.yaml": manifests({**config_map("canary"), "data": {"v": "2"}})}
    )
    web, canary = desired(h, "web"), desired(h, "canary")
    assert (web.revision, canary.revision) == (sha, sha)
    assert data(canary, "canary") == {"v": "2"}
    assert misses(h) - before == 1  # the canary only

    sha = commit(h, {"apps/web/cm.yaml": manifests({**config_map("web"), "data": {"v": "3"}})})
    web, canary = desired(h, "web"), desired(h, "canary")
    assert (web.revision, canary.revision) == (sha, sha)
    assert data(web, "web") == {"v": "3"}
    assert misses(h) - before == 2  # and now web only


def test_a_file_added_or_removed_under_the_path_renders_again(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = make_harness(tmp_path, clock, {"apps/web/a.yaml": manifests(config_map("a"))})
    h.install(application("web", h.remote.url, path="apps/web"))
    desired(h, "web")
    commit(h, {"apps/web/b.yaml": manifests(config_map("b"))})
    assert sorted(o["metadata"]["name"] for o in desired(h, "web").objects) == ["a", "b"]
    commit(h, {"apps/web/a.yaml": None})
    assert [o["metadata"]["name"] for o in desired(h, "web").objects] == ["b"]


def test_an_untouched_app_records_the_new_revision_in_its_status(
    tmp_path: Path, clock: VirtualClock
) -> None:
    """Argo CD's `status.sync.revision` follows the branch, whatever the commit touched."""
    files = {"one/a.yaml": manifests(config_map("a")), "two/b.yaml": manifests(config_map("b"))}
    h = make_harness(tmp_path, clock, files)
    h.install(application("one", h.remote.url, path="one"))
    h.step("one")
    before = misses(h)
    sha = commit(h, {"two/b.yaml": manifests(config_map("b2"))})
    h.step("one")
    assert h.status("one")["sync"]["revision"] == sha
    assert misses(h) == before


def test_a_commit_to_any_source_of_several_renders_again(
    tmp_path: Path, clock: VirtualClock
) -> None:
    """Two directory sources, one app: a commit under the second source's path renders it
    again, whichever source the commit's paths are looked up for; a commit elsewhere moves
    both revisions and renders nothing."""
    files = {
        "one/a.yaml": manifests(config_map("a")),
        "two/b.yaml": manifests(config_map("b")),
        "three/c.yaml": manifests(config_map("c")),
    }
    h = make_harness(tmp_path, clock, files)
    app = application("both", h.remote.url, path="one")
    first = app["spec"].pop("source")
    app["spec"]["sources"] = [first, {**first, "path": "two"}]
    h.install(app)
    assert data(desired(h, "both"), "b") == {"k": "b"}
    before = misses(h)

    sha = commit(h, {"three/c.yaml": manifests(config_map("c2"))})
    assert desired(h, "both").revisions == (sha, sha)
    assert misses(h) == before

    commit(h, {"two/b.yaml": manifests({**config_map("b"), "data": {"k": "b2"}})})
    assert data(desired(h, "both"), "b") == {"k": "b2"}
    assert data(desired(h, "both"), "a") == {"k": "a"}


@pytest.mark.parametrize("chained", [False, True], ids=["link", "link-to-a-link"])
def test_a_symlink_out_of_the_path_makes_its_target_an_input(
    tmp_path: Path, clock: VirtualClock, chained: bool
) -> None:
    """A directory render follows a link in its path to a file elsewhere in the repository
    (as Argo CD does); that file's change must reach the app, though the path's own tree id
    does not move (before: the stale object was served, by the render cache too)."""
    files = {
        "shared/cm.yaml": manifests({**config_map("shared"), "data": {"v": "1"}}),
        "apps/web/own.yaml": manifests(config_map("own")),
    }
    h = make_harness(tmp_path, clock, files)
    if chained:  # apps/web/cm.yaml -> hop.yaml (inside) -> ../../shared/cm.yaml (outside)
        commit_link(h, "apps/web/hop.yaml", "../../shared/cm.yaml")
        commit_link(h, "apps/web/cm.yaml", "hop.yaml")
    else:
        commit_link(h, "apps/web/cm.yaml", "../../shared/cm.yaml")
    h.install(application("web", h.remote.url, path="apps/web"))
    read_through = 2 if chained else 1  # the hop is a manifest file of the path too
    assert shared_values(desired(h, "web")) == ["1"] * read_through

    commit(h, {"shared/cm.yaml": manifests({**config_map("shared"), "data": {"v": "2"}})})
    assert shared_values(desired(h, "web")) == ["2"] * read_through


def shared_values(state: DesiredState) -> list[str]:
    return [o["data"]["v"] for o in state.objects if o["metadata"]["name"] == "shared"]


def test_a_kustomize_base_outside_the_path_renders_again(
    tmp_path: Path, clock: VirtualClock
) -> None:
    files = {
        "base/kustomization.yaml": "resources:\n  - cm.yaml\n",
        "base/cm.yaml": manifests({**config_map("base"), "data": {"v": "1"}}),
        "overlays/prod/kustomization.yaml": "resources:\n  - ../../base\n",
    }
    h = make_harness(tmp_path, clock, files)
    h.install(application("prod", h.remote.url, path="overlays/prod"))
    assert data(desired(h, "prod"), "base") == {"v": "1"}
    commit(h, {"base/cm.yaml": manifests({**config_map("base"), "data": {"v": "2"}})})
    assert data(desired(h, "prod"), "base") == {"v": "2"}


CHART = {
    "charts/web/Chart.yaml": "apiVersion: v2\nname: web\nversion: 0.1.0\n",
    "charts/web/values.yaml": "flag: chart\n",
    "charts/web/templates/cm.yaml": (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n"
        "data:\n  flag: {{ .Values.flag | quote }}\n"
    ),
}


def test_a_helm_value_file_outside_the_chart_renders_again(
    tmp_path: Path, clock: VirtualClock
) -> None:
    require_extra("helm_python", "helm")
    h = make_harness(tmp_path, clock, {**CHART, "envs/prod.yaml": "flag: prod-1\n"})
    app = application("web", h.remote.url, path="charts/web")
    app["spec"]["source"]["helm"] = {"valueFiles": ["../../envs/prod.yaml"]}
    h.install(app)
    assert data(desired(h, "web"), "web") == {"flag": "prod-1"}
    commit(h, {"envs/prod.yaml": "flag: prod-2\n"})
    assert data(desired(h, "web"), "web") == {"flag": "prod-2"}


def test_a_values_ref_of_another_source_renders_again(tmp_path: Path, clock: VirtualClock) -> None:
    require_extra("helm_python", "helm")
    h = make_harness(tmp_path, clock, {**CHART, "envs/prod.yaml": "flag: ref-1\n"})
    app = application("web", h.remote.url, path="charts/web")
    chart = {**app["spec"].pop("source"), "helm": {"valueFiles": ["$values/envs/prod.yaml"]}}
    app["spec"]["sources"] = [
        chart,
        {"repoURL": h.remote.url, "targetRevision": "main", "ref": "values"},
    ]
    h.install(app)
    assert data(desired(h, "web"), "web") == {"flag": "ref-1"}
    commit(h, {"envs/prod.yaml": "flag: ref-2\n"})
    assert data(desired(h, "web"), "web") == {"flag": "ref-2"}


def test_a_plugin_find_command_may_look_outside_the_path(
    tmp_path: Path, clock: VirtualClock
) -> None:
    """A discovering plugin's find command runs over the whole repository, so a commit
    outside the path may hand the app to the plugin: such an app is not carried over."""
    sh = require_program("sh")
    manifest = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-plugin\n"
    plugin = PluginConfig(
        name="flagged",
        version="",
        init=Command(),
        generate=Command((sh, "-c", f"printf '{manifest}'")),
        discover=Discover(find=Command((sh, "-c", "cat ../../flags/plugin 2>/dev/null || true"))),
        preserve_file_mode=False,
        file="test",
    )
    h = make_harness(tmp_path, clock, {"apps/web/cm.yaml": manifests(config_map("own"))})
    h.reader = SourceReader(
        git=GitCache(tmp_path / "plugin-cache"), clock=clock, plugins=PluginCatalog((plugin,))
    )
    h.install(application("web", h.remote.url, path="apps/web"))
    assert [o["metadata"]["name"] for o in desired(h, "web").objects] == ["own"]
    commit(h, {"flags/plugin": "on\n"})
    assert [o["metadata"]["name"] for o in desired(h, "web").objects] == ["from-plugin"]


def test_a_commit_compares_again_only_the_resources_it_changed(
    tmp_path: Path, clock: VirtualClock
) -> None:
    """Three objects in one file, synced; a commit changes one of them (the whole file is
    rendered again, through the YAML reader): the app's comparison takes the other two
    resources' diffs from the last one, and equals what a restarted controller computes."""
    objects = [{**config_map(n), "data": {"v": "1", "n": "2"}} for n in "abc"]
    h = make_harness(tmp_path, clock, {"apps/web/all.yaml": manifests(*objects)})
    h.install(application("web", h.remote.url, path="apps/web", automated={}))
    h.run("web", lambda s: phase(s) == "Succeeded" and s["sync"]["status"] == "Synced")
    before, _ = h.controller.compare("web", APPS_NS)
    assert before is not None
    objects[1]["data"] = {"v": "2", "n": "2"}
    commit(h, {"apps/web/all.yaml": manifests(*objects)})
    after, _ = h.controller.compare("web", APPS_NS)
    assert after is not None and after.sync_status == "OutOfSync"
    kept = {k.name for k, d in after.diffs.items() if before.diffs.get(k) is d}
    assert kept == {"a", "c"}
    h.restart_controller()
    fresh, _ = h.controller.compare("web", APPS_NS)
    assert fresh is not None
    assert [r.to_status() for r in after.resources] == [r.to_status() for r in fresh.resources]
    for key, diff in fresh.diffs.items():
        assert (after.diffs[key].modified, after.diffs[key].diff_lines) == (
            diff.modified, diff.diff_lines
        )
