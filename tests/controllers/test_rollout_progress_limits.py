"""`replicaProgressThreshold` (a step counts as reached with part of its canary pods
available) and `scaleDownDelayRevisionLimit` (how many old ReplicaSets wait out
`scaleDownDelaySeconds`; older ones go at once)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rollout_harness import Harness, rollout, service

from headway.clock import VirtualClock

STEPS = [{"setWeight": 50}, {"pause": {}}]


class CappedHarness(Harness):
    """A kubelet under which the pods of the current template are slow: at most `cap` of
    them become available."""

    cap: int | None = None

    def kubelet(self) -> bool:
        changed = False
        current = f"web-{self.status().get('currentPodHash')}"
        for rs in self.cluster.list("apps/v1", "ReplicaSet", namespace="default"):
            name, want = rs["metadata"]["name"], int(rs["spec"].get("replicas", 0))
            ready = min(self.cap, want) if self.cap is not None and name == current else want
            status = {"replicas": want, "readyReplicas": ready, "availableReplicas": ready,
                      "observedGeneration": rs["metadata"].get("generation", 1)}
            if (rs.get("status") or {}) != status:
                self.cluster.patch_status("apps/v1", "ReplicaSet", name, "default", status)
                changed = True
        return changed


def _update_with_slow_pods(tmp_path: Path, clock: VirtualClock, threshold: Any, cap: int
                           ) -> CappedHarness:
    h = CappedHarness(tmp_path, clock)
    canary: dict[str, Any] = {"steps": STEPS}
    if threshold is not None:
        canary["replicaProgressThreshold"] = threshold
    h.apply(rollout(replicas=10, canary=canary))
    h.settle()
    h.cap = cap
    h.apply(rollout(image="app:v2", replicas=10, canary=canary))
    h.settle()
    return h


@pytest.mark.parametrize(
    ("threshold", "reached"),
    [
        (None, False),  # every one of the 5 canary pods must be available
        ({"type": "Percent", "value": 60}, True),  # 3 of 5 is 60 %
        ({"type": "Percent", "value": 70}, False),
        ({"type": "Pods", "value": 3}, True),
        ({"type": "Pods", "value": 4}, False),
    ],
)
def test_a_step_is_reached_at_the_threshold(
    tmp_path: Path, clock: VirtualClock, threshold: Any, reached: bool
) -> None:
    h = _update_with_slow_pods(tmp_path, clock, threshold, cap=3)
    new = h.status()["currentPodHash"]
    assert h.replica_sets()[new] == 5
    assert h.status()["currentStepIndex"] == (1 if reached else 0)


def test_promotion_waits_for_the_threshold_of_all_replicas(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = _update_with_slow_pods(tmp_path, clock, {"type": "Percent", "value": 80}, cap=8)
    h.patch_status({"pauseConditions": None})
    h.settle()
    status = h.status()
    assert status["currentStepIndex"] == 2
    assert status["stableRS"] == status["currentPodHash"]  # 8 of 10 available: 80 %


def _blue_green(image: str, limit: int | None) -> dict[str, Any]:
    strategy: dict[str, Any] = {"activeService": "active", "scaleDownDelaySeconds": 600}
    if limit is not None:
        strategy["scaleDownDelayRevisionLimit"] = limit
    return rollout(image=image, replicas=2, blue_green=strategy)


@pytest.mark.parametrize(("limit", "kept"), [(None, 2), (1, 1), (0, 0)])
def test_old_replica_sets_beyond_the_limit_go_at_once(
    tmp_path: Path, clock: VirtualClock, limit: int | None, kept: int
) -> None:
    h = Harness(tmp_path, clock)
    h.apply(service("active"))
    hashes = []
    for image in ("app:v1", "app:v2", "app:v3"):
        h.apply(_blue_green(image, limit))
        h.settle()
        hashes.append(h.status()["stableRS"])
        clock.advance(60)  # well inside the 600 s delay
    v1, v2, v3 = hashes
    counts = h.replica_sets()
    assert counts[v3] == 2
    assert [counts[v2], counts[v1]] == [2] * kept + [0] * (2 - kept)
