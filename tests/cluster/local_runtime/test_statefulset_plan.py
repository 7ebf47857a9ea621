"""The StatefulSet and DaemonSet controllers' decisions (pure)."""

from __future__ import annotations

from headway.cluster.local.workloads.daemonsets import DaemonPod, DaemonStep, daemon_step
from headway.cluster.local.workloads.statefulset_plan import (
    PodView,
    StatefulSetShape,
    StatefulStep,
    plan_step,
    revision_counts,
)


def shape(**overrides: object) -> StatefulSetShape:
    base: dict[str, object] = {"replicas": 3, "parallel": False, "on_delete": False,
                               "partition": 0, "current_revision": "r1",
                               "update_revision": "r1"}
    return StatefulSetShape(**{**base, **overrides})  # type: ignore[arg-type]


def ready(ordinal: int, revision: str = "r1") -> PodView:
    return PodView(ordinal, revision, ready=True, terminating=False)


def test_ordered_ready_creates_the_next_ordinal_only_after_the_previous_is_ready() -> None:
    assert plan_step(shape(), []).create == ((0, "r1"),)
    starting = PodView(0, "r1", ready=False, terminating=False)
    assert plan_step(shape(), [starting]).create == ()
    assert plan_step(shape(), [ready(0)]).create == ((1, "r1"),)


def test_parallel_creates_and_deletes_everything_at_once() -> None:
    assert plan_step(shape(parallel=True), []).create == ((0, "r1"), (1, "r1"), (2, "r1"))
    five = [ready(i) for i in range(5)]
    assert plan_step(shape(parallel=True), five).delete == (4, 3)


def test_scale_down_takes_the_highest_ordinal_first_one_at_a_time() -> None:
    five = [ready(i) for i in range(5)]
    assert plan_step(shape(), five).delete == (4,)
    leaving = [*five[:4], PodView(4, "r1", ready=True, terminating=True)]
    assert plan_step(shape(), leaving) == StatefulStep(reason="a condemned pod is terminating")


def test_a_rolling_update_replaces_from_the_top_down_to_the_partition() -> None:
    update = shape(update_revision="r2", partition=1)
    pods = [ready(0), ready(1), ready(2)]
    assert plan_step(update, pods).delete == (2,)
    assert plan_step(update, [ready(0), ready(1), ready(2, "r2")]).delete == (1,)
    done = [ready(0), ready(1, "r2"), ready(2, "r2")]
    assert plan_step(update, done).delete == ()
    assert update.revision_for(0) == "r1"  # below the partition: the current revision
    assert update.revision_for(1) == "r2"
    counts = revision_counts(update, done)
    assert (counts["updatedReplicas"], counts["currentReplicas"]) == (2, 1)
    assert counts["currentRevision"] == "r1"
    finished = revision_counts(shape(update_revision="r2"), [ready(i, "r2") for i in range(3)])
    assert finished["currentRevision"] == "r2"


def test_on_delete_replaces_nothing_by_itself() -> None:
    assert plan_step(shape(on_delete=True, update_revision="r2"), [ready(i) for i in range(3)]
                     ).delete == ()
    assert shape(on_delete=True, update_revision="r2", partition=2).revision_for(0) == "r2"


def daemon(name: str, *, updated: bool, ready: bool = True,
           terminating: bool = False) -> DaemonPod:
    return DaemonPod(name, updated, ready, terminating, finished=False)


def test_a_daemon_set_replaces_its_pod_deleting_first_or_surging() -> None:
    assert daemon_step([], on_delete=False, surge=False).create
    old = daemon("a", updated=False)
    assert daemon_step([old], on_delete=False, surge=False).delete == ("a",)
    gone = daemon("a", updated=False, terminating=True)
    assert daemon_step([gone], on_delete=False, surge=False) == DaemonStep()  # waits
    assert daemon_step([old], on_delete=False, surge=True).create
    starting = daemon("b", updated=True, ready=False)
    assert daemon_step([old, starting], on_delete=False, surge=True).delete == ()
    assert daemon_step([old, daemon("b", updated=True)], on_delete=False,
                       surge=True).delete == ("a",)
    assert daemon_step([old], on_delete=True, surge=False).delete == ()


def test_available_replicas_count_pods_ready_for_min_ready_seconds() -> None:
    fresh = PodView(1, "r1", ready=True, terminating=False, available=False)
    counts = revision_counts(shape(replicas=2), [ready(0), fresh])
    assert (counts["readyReplicas"], counts["availableReplicas"]) == (2, 1)
