"""`canaryMetadata`/`stableMetadata`: labels and annotations per role on the ReplicaSets'
pod templates and on their running pods, changed in place when the roles change."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rollout_harness import Harness, rollout

from headway.clock import VirtualClock

STEPS = [{"setWeight": 25}, {"pause": {}}]
ROLES = {
    "steps": STEPS,
    "canaryMetadata": {"labels": {"role": "canary"}},
    "stableMetadata": {"labels": {"role": "stable"}, "annotations": {"team": "web-oncall"}},
}


def _rs(h: Harness, pod_hash: str) -> dict[str, Any]:
    return h.cluster.get("apps/v1", "ReplicaSet", f"web-{pod_hash}", "default")


def _template_meta(h: Harness, pod_hash: str) -> tuple[str | None, str | None]:
    meta = _rs(h, pod_hash)["spec"]["template"]["metadata"]
    return (meta.get("labels") or {}).get("role"), (meta.get("annotations") or {}).get("team")


def _pod(h: Harness, pod_hash: str, name: str) -> None:
    """A pod of that ReplicaSet, as its controller made it (plus a label someone else set)."""
    rs = _rs(h, pod_hash)
    owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs["metadata"]["name"],
             "uid": rs["metadata"]["uid"], "controller": True}
    labels = {**rs["spec"]["template"]["metadata"]["labels"], "sidecar": "injected"}
    labels.pop("role", None)  # made before the role was written
    h.apply({"apiVersion": "v1", "kind": "Pod",
             "metadata": {"name": name, "namespace": "default", "labels": labels,
                          "ownerReferences": [owner]},
             "spec": {"containers": [{"name": "app", "image": "app"}]}})


def _pod_meta(h: Harness, name: str) -> tuple[dict[str, str], dict[str, str]]:
    meta = h.cluster.get("v1", "Pod", name, "default")["metadata"]
    return dict(meta.get("labels") or {}), dict(meta.get("annotations") or {})


def test_roles_follow_the_rollout_onto_templates_and_pods(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = Harness(tmp_path, clock)
    h.apply(rollout(canary=ROLES))
    h.settle()
    v1 = h.status()["stableRS"]
    assert _template_meta(h, v1) == ("stable", "web-oncall")  # fully rolled out: stable
    _pod(h, v1, "web-v1-a")
    h.step()
    labels, annotations = _pod_meta(h, "web-v1-a")
    assert labels["role"] == "stable" and labels["sidecar"] == "injected"
    assert annotations["team"] == "web-oncall"

    h.apply(rollout(image="app:v2", canary=ROLES))
    h.settle()
    v2 = h.status()["currentPodHash"]
    assert _template_meta(h, v2) == ("canary", None)
    assert _template_meta(h, v1) == ("stable", "web-oncall")
    _pod(h, v2, "web-v2-a")
    h.step()
    assert _pod_meta(h, "web-v2-a") == ({"app": "web", "rollouts-pod-template-hash": v2,
                                          "sidecar": "injected", "role": "canary"}, {})

    h.patch_status({"pauseConditions": None})  # promote: v2 becomes the stable role
    h.settle()
    assert _template_meta(h, v2) == ("stable", "web-oncall")
    labels, annotations = _pod_meta(h, "web-v2-a")
    assert labels["role"] == "stable" and annotations == {"team": "web-oncall"}
    assert _template_meta(h, v1) == (None, None)  # no role any more
    assert "rollout.argoproj.io/ephemeral-metadata" not in _rs(h, v1)["metadata"]["annotations"]


def test_without_role_metadata_nothing_is_written(tmp_path: Path, clock: VirtualClock) -> None:
    h = Harness(tmp_path, clock)
    h.apply(rollout(canary={"steps": STEPS}))
    h.settle()
    rs = _rs(h, h.status()["stableRS"])
    assert "rollout.argoproj.io/ephemeral-metadata" not in rs["metadata"]["annotations"]
    assert "role" not in rs["spec"]["template"]["metadata"]["labels"]


def test_a_role_label_removed_from_the_spec_leaves_the_pods(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = Harness(tmp_path, clock)
    h.apply(rollout(canary=ROLES))
    h.settle()
    v1 = h.status()["stableRS"]
    _pod(h, v1, "web-v1-a")
    h.step()
    fewer = {**ROLES, "stableMetadata": {"annotations": {"team": "web-oncall"}}}
    h.apply(rollout(canary=fewer))
    h.settle()
    labels, annotations = _pod_meta(h, "web-v1-a")
    assert "role" not in labels and labels["sidecar"] == "injected"
    assert annotations == {"team": "web-oncall"}
    assert _template_meta(h, v1) == (None, "web-oncall")
