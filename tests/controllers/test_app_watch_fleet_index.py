"""The source watcher finds the apps a commit touched through its index of what each app
reads, kept current from watch events: from a commit to the changed app's reconcile it does
the same work in a fleet of 40 apps as in one of 400 (it used to ask every app of the
repository for its reads and look in its directory for a Chart.yaml or kustomization: at
10,000 apps, seconds before the changed app's turn), and it puts the apps in the order the
pure `commit_order` gives (a differential check over Kustomize bases, Helm dependencies,
value files and apps edited between commits). Counted, not timed."""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

import pygit2
import pytest
from app_harness import APPS_NS, Remote, application

from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
from headway.controllers.app import fleet_reads
from headway.controllers.app.controller import APP_API_VERSION, ApplicationController
from headway.controllers.app.sources import SourceReader
from headway.controllers.app.steps import SourceWatchSteps
from headway.controllers.manager import ObjectKey
from headway.review.commit_order import commit_order
from headway.source.library import library_paths
from headway.source.tree import GitTree


class Recorder:
    """Stands in for the controller and the reader; snapshots the work counted so far at
    the first reconcile of a step."""

    def __init__(self, work: Counter[str]) -> None:
        self.work = work
        self.reconciled: list[str] = []
        self.at_first: Counter[str] | None = None

    def reconcile(self, name: str, namespace: str) -> float | None:
        if self.at_first is None:
            self.at_first = Counter(self.work)
        self.reconciled.append(name)
        return None

    def mark_changed(self, url: str) -> None:
        pass

    def is_own_status_write(self, obj: object) -> bool:
        return False


class CountingStore:
    """The store, counting each call by name."""

    def __init__(self, store: LocalCluster, work: Counter[str]) -> None:
        self.store = store
        self.work = work

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.store, name)

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.work[f"store.{name}"] += 1
            return method(*args, **kwargs)

        return counted


def count_calls(work: Counter[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Count each app whose reads were worked out, and each lookup in a Git tree."""

    def counted(label: str, method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            work[label] += 1
            return method(*args, **kwargs)

        return wrapper

    monkeypatch.setattr(fleet_reads, "read_paths", counted("read_paths", fleet_reads.read_paths))
    monkeypatch.setattr(GitTree, "kind", counted("tree lookups", GitTree.kind))


def names(apps: int) -> list[str]:
    return [f"app-{i:03d}" for i in range(apps)]


def fleet(tmp_path: Path, apps: int) -> tuple[Remote, LocalCluster]:
    remote = Remote(tmp_path / "remote.git")
    remote.commit({f"apps/{n}/cm.yaml": "kind: ConfigMap\n" for n in names(apps)}, "fleet")
    store = LocalCluster(tmp_path / "cluster.db", VirtualClock())
    store.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": APPS_NS}},
                field_manager="test")
    store.create_all((application(n, remote.url, path=f"apps/{n}") for n in names(apps)),
                     field_manager="test")
    return remote, store


def commit_work(
    tmp_path: Path, apps: int, monkeypatch: pytest.MonkeyPatch
) -> tuple[Counter[str], list[str], list[str]]:
    """The work from a commit to `app-007` until its reconcile; what the step reconciled,
    and what it queued for the Application loop."""
    remote, store = fleet(tmp_path / str(apps), apps)
    work: Counter[str] = Counter()
    recorder = Recorder(work)
    steps = SourceWatchSteps(cast(ApplicationController, recorder),
                             cast(SourceReader, recorder), cast(LocalCluster, CountingStore(
                                 store, work)))
    queued: list[str] = []
    steps.bind_queue(lambda controller, key: queued.append(key.name))
    count_calls(work, monkeypatch)
    steps.step(SourceWatchSteps.KEY)  # lists the fleet, notes the refs, learns libraries
    work.clear()

    remote.commit({"apps/app-007/cm.yaml": "kind: ConfigMap\ndata: {}\n"})
    steps.step(SourceWatchSteps.KEY)

    assert recorder.at_first is not None
    return recorder.at_first, recorder.reconciled, queued


def test_a_commit_reaches_its_app_after_the_same_work_in_any_fleet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small, small_reconciled, small_queued = commit_work(tmp_path, 40, monkeypatch)
    large, large_reconciled, large_queued = commit_work(tmp_path, 400, monkeypatch)

    assert large == small
    assert small["tree lookups"] <= 10 and small["read_paths"] == 0
    assert small["store.list"] == small["store.get"] == 0
    # The step reconciles the app the commit touched; every other app of the repository
    # goes to the Application loop's queue, in name order, to record the new revision.
    assert small_reconciled == large_reconciled == ["app-007"]
    assert small_queued == [n for n in names(40) if n != "app-007"]
    assert large_queued == [n for n in names(400) if n != "app-007"]


def test_an_application_edit_costs_one_get_not_a_list_of_the_fleet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    remote, store = fleet(tmp_path, 40)
    work: Counter[str] = Counter()
    recorder = Recorder(work)
    steps = SourceWatchSteps(cast(ApplicationController, recorder),
                             cast(SourceReader, recorder), cast(LocalCluster, CountingStore(
                                 store, work)))
    steps.step(SourceWatchSteps.KEY)
    moved = store.get(APP_API_VERSION, "Application", "app-003", APPS_NS)
    moved["spec"]["source"]["path"] = "apps/app-009"
    steps.keys_for(store.update(moved, field_manager="test"))  # the manager's watch event
    gone = store.get(APP_API_VERSION, "Application", "app-004", APPS_NS)
    store.delete(APP_API_VERSION, "Application", "app-004", APPS_NS)
    steps.keys_for(gone)
    work.clear()

    steps.step(SourceWatchSteps.KEY)
    remote.commit({"apps/app-009/cm.yaml": "kind: ConfigMap\ndata: {}\n"})
    steps.step(SourceWatchSteps.KEY)

    assert (work["store.list"], work["store.get"]) == (0, 2)
    assert recorder.reconciled[:2] == ["app-003", "app-009"]  # both read the changed path
    assert "app-004" not in recorder.reconciled
    assert sorted(recorder.reconciled) == sorted(n for n in names(40) if n != "app-004")


# --- the order, against the pure commit_order ------------------------------------------

KUSTOMIZE = "resources:\n  - ../../base\n"
CHART = ("apiVersion: v2\nname: c\nversion: 1.0.0\ndependencies:\n"
         "  - name: lib\n    version: 1.0.0\n    repository: file://../../lib/chart\n")
FILES = {
    "base/cm.yaml": "kind: ConfigMap\n",
    "lib/chart/Chart.yaml": "apiVersion: v2\nname: lib\nversion: 1.0.0\n",
    "values/prod.yaml": "a: 1\n",
    "apps/plain/cm.yaml": "kind: ConfigMap\n",
    "apps/plain-two/cm.yaml": "kind: ConfigMap\n",  # "apps/plain" is a prefix of its path
    "apps/kustomized/kustomization.yaml": KUSTOMIZE,
    "apps/charted/Chart.yaml": CHART,
    "apps/valued/cm.yaml": "kind: ConfigMap\n",
}
# Each commit after the first; the last two make `plain` a Kustomize overlay of base, then
# change base again (its library paths must have been learned anew).
COMMITS: list[dict[str, str | None]] = [
    {"base/cm.yaml": "kind: ConfigMap\ndata: {a: b}\n"},
    {"apps/plain/cm.yaml": "kind: ConfigMap\ndata: {}\n"},
    {"lib/chart/values.yaml": "x: 1\n"},
    {"values/prod.yaml": "a: 2\n"},
    {"apps/plain/kustomization.yaml": KUSTOMIZE},
    {"base/cm.yaml": "kind: ConfigMap\ndata: {a: c}\n"},
    {"apps/valued/cm.yaml": None, "README.md": "fleet\n"},
]


def apps(url: str) -> Iterator[dict[str, Any]]:
    for name in ("plain", "plain-two", "kustomized", "charted"):
        yield application(name, url, path=f"apps/{name}")
    valued = application("valued", url, path="apps/valued")
    valued["spec"].pop("source")
    valued["spec"]["sources"] = [
        {"repoURL": url, "path": "apps/valued", "targetRevision": "main",
         "helm": {"valueFiles": ["$values/values/prod.yaml"]}},
        {"repoURL": url, "targetRevision": "main", "ref": "values"},
    ]
    yield valued
    yield application("whole", url, path="")


def expected_order(remote: Remote, store: LocalCluster, files: list[str]) -> list[str]:
    listed = store.list(APP_API_VERSION, "Application")
    tree = GitTree(remote.repo, remote.repo.revparse_single("main").peel(pygit2.Tree), "main")
    libraries = {a["metadata"]["name"]: tuple(
        p for s in [a["spec"].get("source") or a["spec"]["sources"][0]]
        for p in library_paths(tree, str(s.get("path") or ""))) for a in listed}
    ordered = commit_order(listed, {remote.url: files}, libraries=libraries)
    return [a["metadata"]["name"] for a in ordered]


def test_the_index_orders_a_commit_as_commit_order_does(tmp_path: Path) -> None:
    remote = Remote(tmp_path / "remote.git")
    before = remote.commit(dict(FILES), "initial")
    store = LocalCluster(tmp_path / "cluster.db", VirtualClock())
    store.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": APPS_NS}},
                field_manager="test")
    for app in apps(remote.url):
        store.create(app, field_manager="test")
    recorder = Recorder(Counter())
    steps = SourceWatchSteps(cast(ApplicationController, recorder),
                             cast(SourceReader, recorder), store)
    steps.step(SourceWatchSteps.KEY)

    for files in COMMITS:
        after = remote.commit(files)
        recorder.reconciled.clear()
        steps.step(SourceWatchSteps.KEY)
        diff = remote.repo.diff(before, after)
        changed = sorted({d.new_file.path for d in diff.deltas} | {
            d.old_file.path for d in diff.deltas})
        assert recorder.reconciled == expected_order(remote, store, changed), files
        assert recorder.reconciled[0] != "plain-two" or files == COMMITS[-1]
        before = after


def test_the_order_follows_an_app_whose_source_path_was_edited(tmp_path: Path) -> None:
    remote, store = fleet(tmp_path, 5)
    recorder = Recorder(Counter())
    steps = SourceWatchSteps(cast(ApplicationController, recorder),
                             cast(SourceReader, recorder), store)
    steps.step(SourceWatchSteps.KEY)
    edited = store.get(APP_API_VERSION, "Application", "app-004", APPS_NS)
    edited["spec"]["source"]["path"] = "apps/app-001"
    steps.keys_for(store.update(edited, field_manager="test"))
    steps.step(SourceWatchSteps.KEY)

    remote.commit({"apps/app-004/cm.yaml": "kind: ConfigMap\ndata: {}\n"})
    steps.step(SourceWatchSteps.KEY)
    assert recorder.reconciled[0] == "app-000"  # nobody reads app-004's old path any more
    recorder.reconciled.clear()
    remote.commit({"apps/app-001/cm.yaml": "kind: ConfigMap\ndata: {}\n"})
    steps.step(SourceWatchSteps.KEY)
    assert recorder.reconciled[:2] == ["app-001", "app-004"]
    assert ObjectKey(APPS_NS, "app-004") in {ObjectKey(APPS_NS, n) for n in recorder.reconciled}
