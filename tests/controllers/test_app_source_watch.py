"""The source watcher lists Applications again only when a watch event says one changed,
and still refreshes an Application created after its first look when its repository moves."""

from __future__ import annotations

from pathlib import Path
from typing import cast

from app_harness import CountingLists, Remote, application

from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
from headway.controllers.app.controller import ApplicationController
from headway.controllers.app.sources import SourceReader
from headway.controllers.app.steps import SourceWatchSteps


class Recorder:
    """Stands in for the controller and the reader: records what the watcher asks of them."""

    def __init__(self) -> None:
        self.reconciled: list[str] = []
        self.marked: list[str] = []

    def reconcile(self, name: str, namespace: str) -> float | None:
        self.reconciled.append(name)
        return None

    def mark_changed(self, url: str) -> None:
        self.marked.append(url)

    def is_own_status_write(self, obj: object) -> bool:
        return False


def watcher(tmp_path: Path) -> tuple[SourceWatchSteps, Recorder, CountingLists, Remote]:
    remote = Remote(tmp_path / "remote.git")
    remote.commit({"apps/a/cm.yaml": "kind: ConfigMap\n"}, "initial")
    store = LocalCluster(tmp_path / "cluster.db", VirtualClock())
    store.apply(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "argocd"}},
        field_manager="test",
    )
    store.create(application("a", remote.url, path="apps/a"), field_manager="test")
    recorder, counting = Recorder(), CountingLists(store)
    steps = SourceWatchSteps(
        cast(ApplicationController, recorder), cast(SourceReader, recorder), counting
    )
    return steps, recorder, counting, remote


def test_idle_steps_list_the_applications_once(tmp_path: Path) -> None:
    steps, _, counting, _ = watcher(tmp_path)

    for _ in range(3):
        steps.step(SourceWatchSteps.KEY)

    assert counting.lists == 1


def test_an_application_created_later_is_refreshed_when_its_repository_moves(
    tmp_path: Path,
) -> None:
    steps, recorder, counting, remote = watcher(tmp_path)
    steps.step(SourceWatchSteps.KEY)
    later = application("b", remote.url, path="apps/b")
    counting.store.create(later, field_manager="test")
    steps.keys_for(later)  # what the manager does with the Application's watch event

    remote.commit({"apps/b/cm.yaml": "kind: ConfigMap\n"}, "b")
    steps.step(SourceWatchSteps.KEY)

    assert recorder.marked == [remote.url]
    assert sorted(recorder.reconciled) == ["a", "b"]
