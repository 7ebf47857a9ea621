"""The ReplicaSet a Deployment-like owner runs one pod template in. Pure: builds a manifest.

Kubernetes' Deployment controller and Argo Rollouts build it the same way: named
`<owner>-<hash>`, in the owner's namespace, with the owner's `spec.template` and
`spec.selector` both extended by a hash label (`pod-template-hash` for a Deployment,
`rollouts-pod-template-hash` for a Rollout) so that the sets of two templates never select
each other's pods, and the owner's `minReadySeconds` carried over. The owner decides the
label key, the annotations (its revision number) and the ownerReference.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

__all__ = ["owned_replica_set"]


def owned_replica_set(
    owner: Mapping[str, Any],
    *,
    hash_label: str,
    pod_hash: str,
    replicas: int,
    annotations: Mapping[str, str],
    owner_reference: Mapping[str, Any],
) -> dict[str, Any]:
    """A new `apps/v1` ReplicaSet for `owner`'s current template (the owner is not changed)."""
    meta, spec = owner["metadata"], owner.get("spec") or {}
    template = copy.deepcopy(spec.get("template") or {})
    template_meta = template.setdefault("metadata", {})
    labels = {**(template_meta.get("labels") or {}), hash_label: pod_hash}
    template_meta["labels"] = labels
    selector = copy.deepcopy(spec.get("selector") or {})
    selector["matchLabels"] = {**(selector.get("matchLabels") or {}), hash_label: pod_hash}
    rs_spec: dict[str, Any] = {"replicas": replicas, "selector": selector, "template": template}
    if spec.get("minReadySeconds"):
        rs_spec["minReadySeconds"] = spec["minReadySeconds"]
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": f"{meta['name']}-{pod_hash}",
            "namespace": meta.get("namespace") or "default",
            "labels": labels,
            "annotations": dict(annotations),
            "ownerReferences": [dict(owner_reference)],
        },
        "spec": rs_spec,
    }
