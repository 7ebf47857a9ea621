"""Refresh caching, the local ref watch, and `--apps` definitions."""

from __future__ import annotations

from pathlib import Path

from app_harness import APPS_NS, application, config_map, make_harness, manifests, phase

from headway.clock import VirtualClock
from headway.controllers.app.controller import APP_API_VERSION
from headway.controllers.app.definitions import DefinitionsWatcher, load_definitions
from headway.controllers.app.sources import LocalRefWatcher
from headway.kubetime import format_time
from headway.model.application import parse_application
from headway.model.yamlload import Document


def test_a_commit_elsewhere_in_the_repo_reuses_the_comparison(
    tmp_path: Path, clock: VirtualClock
) -> None:
    files = {"one/a.yaml": manifests(config_map("a")), "two/b.yaml": manifests(config_map("b"))}
    h = make_harness(tmp_path, clock, files)
    h.install(application("one", h.remote.url, path="one", automated={}))
    h.run("one", lambda s: phase(s) == "Succeeded" and s["sync"]["status"] == "Synced")
    h.step("one")
    cache = h.controller.comparisons
    before = (cache.hits, cache.misses)
    h.remote.commit({"two/b.yaml": manifests(config_map("b2"))})
    h.reader.mark_changed(h.remote.url)
    h.step("one")
    assert (cache.hits - before[0], cache.misses - before[1]) == (1, 0)
    assert h.status("one")["sync"]["revision"] == str(h.remote.repo.head.target)
    h.remote.commit({"one/a.yaml": manifests({**config_map("a"), "data": {"k": "new"}})})
    h.reader.mark_changed(h.remote.url)
    h.step("one")
    assert cache.misses - before[1] == 1


def test_ref_watch_notices_a_commit_to_a_local_repository(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = make_harness(tmp_path, clock, {"a.yaml": manifests(config_map("a"))})
    watcher = LocalRefWatcher()
    assert watcher.changed([h.remote.url]) == []  # first look: a baseline, not a change
    assert watcher.changed([h.remote.url]) == []
    h.remote.commit({"a.yaml": manifests(config_map("b"))})
    assert watcher.changed([h.remote.url]) == [h.remote.url]
    assert watcher.changed(["https://git.example.com/x.git"]) == []


def test_apps_path_publishes_valid_definitions_and_reports_bad_ones(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = make_harness(tmp_path, clock, {"app/a.yaml": manifests(config_map("a"))})
    apps = tmp_path / "apps"
    apps.mkdir()
    good = application("shop", h.remote.url, path="app")
    del good["metadata"]["namespace"]
    (apps / "good.yaml").write_text(manifests(good))
    bad = application("broken", h.remote.url, path="app")
    del bad["spec"]["destination"]
    (apps / "bad.yaml").write_text(manifests(bad))
    loaded = load_definitions(apps)
    assert [o["metadata"]["name"] for o in loaded.objects] == ["shop"]
    errors = [str(d) for d in loaded.diagnostics if d.severity == "error"]
    assert len(errors) == 1 and errors[0].startswith(f"{apps / 'bad.yaml'}:")
    assert "spec.destination" in errors[0]
    watcher = DefinitionsWatcher(apps)
    problems = watcher.sync(h.store)
    assert problems is not None and len(problems) == 1
    assert h.store.get(APP_API_VERSION, "Application", "shop", APPS_NS)["spec"]["project"]
    assert watcher.sync(h.store) is None  # nothing changed since


def test_a_refresh_that_changes_nothing_writes_nothing(tmp_path: Path, clock: VirtualClock) -> None:
    h = make_harness(tmp_path, clock, {"app/a.yaml": manifests(config_map("a"))})
    app = application("shop", h.remote.url, path="app", automated={})
    app["spec"]["ignoreDifferences"] = [{"kind": "Deployment", "jsonPointers": ["/spec"]}]
    h.install(app)
    h.run("shop", lambda s: phase(s) == "Succeeded" and s["sync"]["status"] == "Synced")
    h.step("shop")
    version = h.app("shop")["metadata"]["resourceVersion"]
    clock.advance(120)
    h.step("shop")  # a condition is still there, reconciledAt would move: no write
    assert h.app("shop")["metadata"]["resourceVersion"] == version


def test_an_application_removed_from_the_apps_path_is_deleted(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = make_harness(tmp_path, clock, {"app/a.yaml": manifests(config_map("a"))})
    apps = tmp_path / "apps"
    apps.mkdir()
    (apps / "one.yaml").write_text(manifests(application("one", h.remote.url, path="app")))
    (apps / "two.yaml").write_text(manifests(application("two", h.remote.url, path="app")))
    watcher = DefinitionsWatcher(apps)
    assert watcher.sync(h.store) == []
    (apps / "two.yaml").unlink()
    (apps / "one.yaml").write_text("kind: [broken\n")
    assert watcher.sync(h.store)  # an error anywhere: nothing is withdrawn
    assert len(h.store.list(APP_API_VERSION, "Application")) == 2
    (apps / "one.yaml").write_text(manifests(application("one", h.remote.url, path="app")))
    assert watcher.sync(h.store) == []
    names = [a["metadata"]["name"] for a in h.store.list(APP_API_VERSION, "Application")]
    assert names == ["one"]


def test_identity_reuse_across_commits_follows_the_changed_paths(
    tmp_path: Path, clock: VirtualClock
) -> None:
    files = {
        "one/a.yaml": manifests(config_map("a")),
        "one-two/b.yaml": manifests(config_map("b")),
    }
    h = make_harness(tmp_path, clock, files)
    app = application("one", h.remote.url, path="one")
    app["spec"]["source"]["directory"] = {"recurse": True}
    h.install(app)
    raw = h.app("one")
    parsed, _ = parse_application(Document(raw, "test", 0, 0))
    assert parsed is not None
    first = h.reader.desired(parsed, raw)
    h.remote.commit({"one-two/b.yaml": manifests(config_map("b2"))})  # a sibling with a prefix
    h.reader.mark_changed(h.remote.url)
    second = h.reader.desired(parsed, raw)
    assert second.revision != first.revision and second.fingerprint == first.fingerprint
    h.remote.commit({"one/deeper/c.yaml": manifests(config_map("c"))})
    h.reader.mark_changed(h.remote.url)
    third = h.reader.desired(parsed, raw)
    assert third.fingerprint != first.fingerprint
    assert sorted(o["metadata"]["name"] for o in third.objects) == ["a", "c"]


def test_reconciled_at_tells_the_last_refresh_within_one_poll_interval(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = make_harness(tmp_path, clock, {"one/a.yaml": manifests(config_map("a"))})
    h.install(application("one", h.remote.url, path="one", automated={}))
    h.run("one", lambda s: phase(s) == "Succeeded" and s["sync"]["status"] == "Synced")
    h.step("one")
    settled = h.status("one")["reconciledAt"]
    clock.advance(60)
    h.step("one")  # a refresh that changed nothing: no write for the stamp alone yet
    assert h.status("one")["reconciledAt"] == settled
    clock.advance(120)  # the stored stamp is now one poll interval (180 s) old
    h.step("one")
    assert h.status("one")["reconciledAt"] == format_time(clock.now())
