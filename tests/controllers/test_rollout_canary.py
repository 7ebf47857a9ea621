"""The Rollout controller against a real LocalCluster: basic canary (no router)."""

from __future__ import annotations

from pathlib import Path

from rollout_harness import Harness, rollout

from headway.clock import VirtualClock

STEPS = [{"setWeight": 25}, {"pause": {}}, {"setWeight": 50}, {"pause": {"duration": 30}}]


def test_initial_deploy_is_promoted_at_once(tmp_path: Path, clock: VirtualClock) -> None:
    h = Harness(tmp_path, clock)
    h.apply(rollout(canary={"steps": STEPS}))
    h.settle()
    status = h.status()
    assert status["phase"] == "Healthy", status
    assert status["stableRS"] == status["currentPodHash"]
    assert status["currentStepIndex"] == 4
    assert list(h.replica_sets().values()) == [4]
    assert h.condition("Progressing")["reason"] == "NewReplicaSetAvailable"
    assert h.condition("Healthy")["status"] == "True"


def test_update_walks_the_steps(tmp_path: Path, clock: VirtualClock) -> None:
    h = Harness(tmp_path, clock)
    h.apply(rollout(canary={"steps": STEPS}))
    h.settle()
    stable = h.status()["stableRS"]
    h.apply(rollout(image="app:v2", canary={"steps": STEPS}))
    h.settle()
    status = h.status()
    new = status["currentPodHash"]
    assert new != stable
    assert status["phase"] == "Paused" and status["message"] == "CanaryPauseStep"
    assert status["currentStepIndex"] == 1
    assert h.replica_sets() == {stable: 3, new: 1}
    # promote: the user removes the pause condition (what `rollouts promote` does)
    h.patch_status({"pauseConditions": None})
    wake = h.settle()
    status = h.status()
    assert status["currentStepIndex"] == 3
    assert h.replica_sets() == {stable: 2, new: 2}
    assert wake == 30.0
    clock.advance(30)
    h.settle()
    status = h.status()
    assert status["phase"] == "Healthy", status
    assert status["stableRS"] == new
    assert h.replica_sets() == {stable: 0, new: 4}
