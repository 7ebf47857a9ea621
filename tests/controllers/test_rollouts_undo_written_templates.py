"""`rollouts undo` and `set image` on what the controller writes into ReplicaSets (per-role
metadata, the anti-affinity term) and on a Rollout whose template is a Deployment's."""

from __future__ import annotations

from pathlib import Path

import pytest
from rollout_harness import Harness, rollout
from test_rollout_workload_ref import deployment, referencing

from headway.clock import VirtualClock
from headway.steering import rollouts as commands

STEPS = [{"setWeight": 25}, {"pause": {}}]
CANARY = {
    "steps": STEPS,
    "canaryMetadata": {"labels": {"role": "canary"}},
    "stableMetadata": {"labels": {"role": "stable"}, "annotations": {"team": "web"}},
    "antiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": {"weight": 50}},
}


def test_undo_returns_to_the_replica_set_despite_what_was_written_into_it(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = Harness(tmp_path, clock)
    h.apply(rollout(canary=CANARY))
    h.settle()
    v1 = h.status()["stableRS"]
    h.apply(rollout(image="app:v2", canary=CANARY))
    h.settle()
    v2 = h.status()["currentPodHash"]
    h.patch_status({"pauseConditions": None})
    h.settle()
    h.apply(rollout(image="app:v3", canary=CANARY))
    h.settle()  # v3 paused as a canary; v2 stable, carrying role=stable and an anti-affinity term
    commands.undo(h.cluster, "default", "web", to_revision=2)
    h.settle()
    status = h.status()
    assert status["currentPodHash"] == v2 and status["stableRS"] == v2
    assert status["phase"] == "Healthy"  # the stable template again: steps skipped
    template = h.get()["spec"]["template"]
    assert template == rollout(canary=CANARY)["spec"]["template"] | {
        "spec": {"containers": [{"name": "app", "image": "app:v2"}]}}
    assert v1 != v2


def test_undo_of_a_workload_ref_restores_the_deployment(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = Harness(tmp_path, clock)
    h.apply(deployment())
    h.apply(referencing(None))
    h.settle()
    v1 = h.status()["stableRS"]
    h.apply(deployment(image="app:v2"))
    h.settle()
    commands.undo(h.cluster, "default", "web")
    workload = h.cluster.get("apps/v1", "Deployment", "web", "default")
    assert workload["spec"]["template"]["spec"]["containers"][0]["image"] == "app:v1"
    assert "template" not in h.get()["spec"]
    h.settle()
    assert h.status()["currentPodHash"] == v1 and h.status()["phase"] == "Healthy"


def test_set_image_of_a_workload_ref_points_at_the_deployment(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = Harness(tmp_path, clock)
    h.apply(deployment())
    h.apply(referencing(None))
    with pytest.raises(commands.RolloutCommandError) as refused:
        commands.set_image(h.cluster, "default", "web", container="app", image="app:v2")
    assert str(refused.value) == (
        "rollout 'web' takes its pod template from Deployment 'web' (workloadRef): change the "
        "image there, e.g. kubectl set image deployment/web app=app:v2")
