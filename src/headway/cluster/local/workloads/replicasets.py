"""The ReplicaSet controller: keep `spec.replicas` active Pods of the template, for any owner.

A ReplicaSet's Pods are the Pods in its namespace whose controller ownerReference points
at it (whoever owns the ReplicaSet itself: a Deployment, a Rollout, nobody). One step:

  missing  = replicas - active pods  -> create that many Pods from the template
  surplus  = active pods - replicas  -> delete that many, least valuable first
                                        (see `pod_facts.scale_down_order`)

then write `status`: replicas, fullyLabeledReplicas, readyReplicas, availableReplicas
(ready for `minReadySeconds`) and observedGeneration. Returns when to look again (a pod
that becomes available after minReadySeconds), or None.
"""

from __future__ import annotations

import contextlib
import copy
import secrets
from collections.abc import Mapping
from typing import Any

from headway.clock import Clock
from headway.cluster.errors import NotFound
from headway.cluster.local.workloads.recorder import note, reconcile_each
from headway.cluster.protocol import Cluster
from headway.kube.pod_facts import (
    is_active,
    is_available,
    is_ready,
    owned_by,
    scale_down_order,
    seconds_until_available,
)
from headway.kube.pod_template import SAFE_ALPHABET
from headway.model.obj import Obj

__all__ = [
    "FIELD_MANAGER",
    "owner_reference",
    "pods_of",
    "reconcile_replica_set",
    "selector_string",
]

FIELD_MANAGER = "headway-replicaset-controller"


def owner_reference(owner: Mapping[str, Any]) -> dict[str, Any]:
    meta = owner["metadata"]
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def selector_string(selector: Mapping[str, Any] | None) -> str:
    """A LabelSelector (matchLabels + matchExpressions) as a selector string."""
    if not selector:
        return ""
    parts = [f"{k}={v}" for k, v in sorted((selector.get("matchLabels") or {}).items())]
    for expr in selector.get("matchExpressions") or []:
        key, op = expr.get("key"), expr.get("operator")
        values = ",".join(str(v) for v in expr.get("values") or [])
        parts.append(
            {
                "In": f"{key} in ({values})",
                "NotIn": f"{key} notin ({values})",
                "Exists": f"{key}",
                "DoesNotExist": f"!{key}",
            }[str(op)]
        )
    return ",".join(parts)


def pods_of(cluster: Cluster, owner: Obj) -> list[Obj]:
    """The Pods whose controller is `owner`."""
    meta = owner["metadata"]
    pods = cluster.list("v1", "Pod", namespace=meta.get("namespace") or "default")
    return [p for p in pods if owned_by(p, str(meta["uid"]))]


def random_suffix() -> str:
    """Five random characters, as Kubernetes appends to generated Pod names."""
    return "".join(secrets.choice(SAFE_ALPHABET) for _ in range(5))


def pod_from_template(owner: Obj, template: Mapping[str, Any], name_prefix: str) -> Obj:
    tmeta = template.get("metadata") or {}
    meta: dict[str, Any] = {
        "name": f"{name_prefix}-{random_suffix()}",
        "namespace": owner["metadata"].get("namespace") or "default",
        "ownerReferences": [owner_reference(owner)],
    }
    if tmeta.get("labels"):
        meta["labels"] = dict(tmeta["labels"])
    if tmeta.get("annotations"):
        meta["annotations"] = dict(tmeta["annotations"])
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": copy.deepcopy(template.get("spec") or {}),
    }


def reconcile_replica_set(cluster: Cluster, clock: Clock, rs: Obj) -> float | None:
    """One step for one ReplicaSet; returns seconds until it wants another look, or None."""
    spec = rs.get("spec") or {}
    meta = rs["metadata"]
    if meta.get("deletionTimestamp"):
        return None
    desired = int(spec.get("replicas", 1))
    pods = [p for p in pods_of(cluster, rs) if is_active(p)]
    if len(pods) < desired:
        for _ in range(desired - len(pods)):
            pod = pod_from_template(rs, spec.get("template") or {}, str(meta["name"]))
            pods.append(cluster.apply(pod, field_manager=FIELD_MANAGER))
            note(cluster, clock, rs, "SuccessfulCreate", f"Created pod: {pod['metadata']['name']}")
    elif len(pods) > desired:
        victims = scale_down_order(pods)[: len(pods) - desired]
        gone = {v["metadata"]["uid"] for v in victims}
        for victim in victims:
            with contextlib.suppress(NotFound):
                cluster.delete("v1", "Pod", victim["metadata"]["name"], meta.get("namespace"))
                note(
                    cluster,
                    clock,
                    rs,
                    "SuccessfulDelete",
                    f"Deleted pod: {victim['metadata']['name']}",
                )
        pods = [p for p in pods if p["metadata"]["uid"] not in gone]
    return _write_status(cluster, clock, rs, pods)


def _write_status(cluster: Cluster, clock: Clock, rs: Obj, pods: list[Obj]) -> float | None:
    spec = rs.get("spec") or {}
    min_ready = float(spec.get("minReadySeconds") or 0)
    now = clock.now()
    labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
    status = {
        "replicas": len(pods),
        "fullyLabeledReplicas": sum(
            1
            for p in pods
            if all((p["metadata"].get("labels") or {}).get(k) == v for k, v in labels.items())
        ),
        "readyReplicas": sum(1 for p in pods if is_ready(p)),
        "availableReplicas": sum(1 for p in pods if is_available(p, min_ready, now)),
        "observedGeneration": rs["metadata"].get("generation", 1),
    }
    old = rs.get("status") or {}
    merged = {**{k: v for k, v in old.items() if k == "conditions"}, **status}
    if merged != old:
        cluster.patch_status(
            "apps/v1", "ReplicaSet", rs["metadata"]["name"], rs["metadata"].get("namespace"), merged
        )
    return seconds_until_available(pods, min_ready, now)


def sync_replica_sets(cluster: Cluster, clock: Clock) -> float | None:
    """One step for every ReplicaSet; the earliest requeue, or None."""
    return reconcile_each(
        cluster,
        clock,
        cluster.list("apps/v1", "ReplicaSet"),
        lambda rs: reconcile_replica_set(cluster, clock, rs),
    )
