"""`spec.workloadRef`: a Rollout that takes its pods from a Deployment, and what it does to
the Deployment's own pods (`scaleDown`), on a real LocalCluster with a virtual clock."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from rollout_harness import API, Harness, rollout

from headway.clock import VirtualClock
from headway.controllers.manager import ObjectKey
from headway.model.obj import Obj

STEPS = [{"setWeight": 25}, {"pause": {}}]
GENERATION = "rollout.argoproj.io/workload-generation"


def deployment(image: str = "app:v1", replicas: int = 4) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app", "image": image}]},
            },
        },
    }


def referencing(scale_down: str | None, kind: str = "Deployment") -> Obj:
    ro = rollout(canary={"steps": STEPS})
    del ro["spec"]["template"], ro["spec"]["selector"]  # both come from the Deployment
    ref: dict[str, Any] = {"apiVersion": "apps/v1", "kind": kind, "name": "web"}
    if scale_down is not None:
        ref["scaleDown"] = scale_down
    ro["spec"]["workloadRef"] = ref
    return ro


def _deployment_replicas(h: Harness) -> int:
    return int(h.cluster.get("apps/v1", "Deployment", "web", "default")["spec"]["replicas"])


def _ready(h: Harness, count: int) -> None:
    """Only `count` pods of the Rollout's ReplicaSets are ready (a kubelet mid-way)."""
    for rs in h.cluster.list("apps/v1", "ReplicaSet", namespace="default"):
        want = int(rs["spec"]["replicas"])
        status = {"replicas": want, "readyReplicas": min(count, want),
                  "availableReplicas": min(count, want)}
        h.cluster.patch_status("apps/v1", "ReplicaSet", rs["metadata"]["name"], "default", status)


def test_the_rollout_runs_the_deployments_template(tmp_path: Path, clock: VirtualClock) -> None:
    h = Harness(tmp_path, clock)
    h.apply(deployment())
    h.apply(referencing(None))
    h.settle()
    [rs] = h.cluster.list("apps/v1", "ReplicaSet", namespace="default")
    assert rs["spec"]["template"]["spec"]["containers"][0]["image"] == "app:v1"
    assert rs["spec"]["selector"]["matchLabels"]["app"] == "web"
    assert rs["spec"]["replicas"] == 4
    assert h.get()["metadata"]["annotations"][GENERATION] == "1"
    status = h.status()
    assert status["workloadObservedGeneration"] == "1" and status["phase"] == "Healthy"
    assert _deployment_replicas(h) == 4  # scaleDown defaults to never


def test_progressively_hands_pods_over_as_they_become_ready(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = Harness(tmp_path, clock)
    h.apply(deployment())
    h.apply(referencing("progressively"))
    h.step()  # the Rollout's ReplicaSet is created
    h.step()  # ... and scaled to 4
    assert _deployment_replicas(h) == 4  # none of its pods is ready yet
    _ready(h, 1)
    h.step()  # the status records 1 ready
    h.step()  # ... which the next reconcile reads
    assert _deployment_replicas(h) == 3
    _ready(h, 3)
    h.step()
    h.step()
    assert _deployment_replicas(h) == 1
    h.settle()
    assert h.status()["phase"] == "Healthy"
    assert _deployment_replicas(h) == 0


def test_on_success_scales_the_deployment_down_only_once_healthy(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = Harness(tmp_path, clock)
    h.apply(deployment())
    h.apply(referencing("onsuccess"))
    h.step()
    h.step()
    _ready(h, 3)
    for _ in range(3):
        h.step()
    assert h.status()["phase"] != "Healthy"
    assert _deployment_replicas(h) == 4
    h.settle()
    assert _deployment_replicas(h) == 0


def test_a_deployment_edit_is_a_new_revision_through_the_steps(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = Harness(tmp_path, clock)
    h.apply(deployment())
    h.apply(referencing("onsuccess"))
    h.settle()
    stable = h.status()["stableRS"]
    seen = h.status()["workloadObservedGeneration"]  # scaling the Deployment moved it too
    edited = deployment(image="app:v2", replicas=0)  # what a GitOps repo now says
    h.apply(edited)
    generation = str(h.cluster.get("apps/v1", "Deployment", "web", "default")["metadata"][
        "generation"])
    assert generation != seen
    # the controller has not seen the edit yet: Argo CD's health waits for it
    assert h.status()["workloadObservedGeneration"] == seen
    h.settle()
    status = h.status()
    assert h.get()["metadata"]["annotations"][GENERATION] == generation
    assert status["workloadObservedGeneration"] == generation
    assert status["phase"] == "Paused" and status["currentStepIndex"] == 1
    new = status["currentPodHash"]
    assert h.replica_sets() == {stable: 3, new: 1}
    assert _deployment_replicas(h) == 0  # revision 2 never scales the Deployment


def test_a_change_of_the_deployment_wakes_the_rollout(tmp_path: Path, clock: VirtualClock) -> None:
    h = Harness(tmp_path, clock)
    h.apply(deployment())
    h.apply(referencing(None))
    h.apply({**rollout(name="other"), "metadata": {"name": "other", "namespace": "default"}})
    keys = h.controller.keys_for(h.cluster.get("apps/v1", "Deployment", "web", "default"))
    assert list(keys) == [ObjectKey("default", "web")]


def test_a_missing_deployment_is_an_invalid_spec(tmp_path: Path, clock: VirtualClock) -> None:
    h = Harness(tmp_path, clock)
    h.apply(referencing("onsuccess"))
    h.settle()
    status = h.status()
    assert status["phase"] == "Degraded"
    assert status["message"] == (
        "InvalidSpec: spec.workloadRef: Deployment 'web' not found in default")
    assert h.replica_sets() == {}
    h.apply(deployment())  # created afterwards: the Rollout goes on
    h.settle()
    assert h.status()["phase"] == "Healthy"


@pytest.mark.parametrize("kind", ["ReplicaSet", "PodTemplate"])
def test_other_workload_kinds_are_refused(
    tmp_path: Path, clock: VirtualClock, kind: str
) -> None:
    h = Harness(tmp_path, clock)
    h.apply(deployment())
    h.apply(referencing(None, kind=kind))
    h.settle()
    assert h.status()["message"].startswith(
        "InvalidSpec: spec.workloadRef: a workloadRef to anything but an apps/v1 Deployment")
    assert h.replica_sets() == {}


def test_the_argo_rollout_api_object_stays_as_written(tmp_path: Path, clock: VirtualClock) -> None:
    """The resolved template lives only in the controller's view: the stored spec keeps
    the workloadRef alone, so a GitOps diff of the Rollout stays clean."""
    h = Harness(tmp_path, clock)
    h.apply(deployment())
    written = referencing(None)
    h.apply(copy.deepcopy(written))
    h.settle()
    spec = h.cluster.get(API, "Rollout", "web", "default")["spec"]
    assert "template" not in spec and "selector" not in spec


def test_the_deployments_replica_set_of_the_same_name_is_left_alone(
    tmp_path: Path, clock: VirtualClock
) -> None:
    """A Deployment and a Rollout both named `web` with one template hash to the same
    ReplicaSet name; the Rollout counts a collision and takes the next hash, as Argo does."""
    from headway.kube.pod_template import pod_template_hash

    h = Harness(tmp_path, clock)
    workload = h.apply(deployment())
    template = workload["spec"]["template"]
    theirs = f"web-{pod_template_hash(template, 0)}"
    owner = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web",
             "uid": workload["metadata"]["uid"], "controller": True}
    h.apply({"apiVersion": "apps/v1", "kind": "ReplicaSet",
             "metadata": {"name": theirs, "namespace": "default", "ownerReferences": [owner]},
             "spec": {"replicas": 4, "selector": {"matchLabels": {"app": "web", "h": "d"}},
                      "template": {**template, "metadata": {"labels": {"app": "web", "h": "d"}}}}})
    h.apply(referencing("progressively"))
    h.settle()
    status = h.status()
    assert status["collisionCount"] == 1 and status["phase"] == "Healthy"
    assert status["currentPodHash"] == pod_template_hash(template, 1)
    found = h.cluster.get("apps/v1", "ReplicaSet", theirs, "default")
    assert found["metadata"]["ownerReferences"] == [owner]
