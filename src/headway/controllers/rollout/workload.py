"""The edge of `workloadRef`: read the referenced Deployment, record its generation on the
Rollout, and scale it as the decisions say (`headway.rollout.workload_ref` decides)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from headway.cluster.errors import NotFound
from headway.cluster.protocol import Cluster
from headway.model import support
from headway.model.obj import Obj
from headway.rollout.workload_ref import WORKLOAD_GENERATION_ANNOTATION, resolved_rollout

__all__ = ["WORKLOAD_FIELD_MANAGER", "referencing_rollouts", "resolve_workload", "scale_workload"]

WORKLOAD_FIELD_MANAGER = "headway-rollouts-workload-ref"
_DEPLOYMENT = ("apps/v1", "Deployment")


def _deployment_ref(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    ref = (obj.get("spec") or {}).get("workloadRef")
    if not isinstance(ref, Mapping) or (ref.get("apiVersion"), ref.get("kind")) != _DEPLOYMENT:
        return None  # none, or one the spec check refuses
    return ref


def resolve_workload(cluster: Cluster, obj: Obj) -> tuple[Obj, str | None]:
    """The Rollout as its decisions read it (the Deployment's template filled in), or the
    Rollout as read and why its workload cannot be resolved. Writes the workload-generation
    annotation first when the Deployment's generation moved (the Rollout is read back)."""
    spec = obj.get("spec") or {}
    if spec.get("workloadRef") is None:
        return obj, None
    refused = [g for g in support.rollout_gaps(spec) if g.path[:1] == ("workloadRef",)]
    if refused:
        return obj, refused[0].describe(("spec",))  # before any ReplicaSet is made of nothing
    ref = _deployment_ref(obj)
    assert ref is not None  # anything else is refused above
    meta = obj["metadata"]
    namespace = str(meta.get("namespace") or "default")
    try:
        workload = cluster.get(*_DEPLOYMENT, str(ref.get("name")), namespace)
    except NotFound:
        return obj, f"spec.workloadRef: Deployment '{ref.get('name')}' not found in {namespace}"
    generation = str((workload.get("metadata") or {}).get("generation") or 1)
    if (meta.get("annotations") or {}).get(WORKLOAD_GENERATION_ANNOTATION) != generation:
        body = {
            "apiVersion": obj["apiVersion"],
            "kind": obj["kind"],
            "metadata": {
                "name": meta["name"],
                "namespace": namespace,
                "annotations": {WORKLOAD_GENERATION_ANNOTATION: generation},
            },
        }
        obj = cluster.apply(body, field_manager=WORKLOAD_FIELD_MANAGER, force=True)
    return resolved_rollout(obj, workload), None


def scale_workload(cluster: Cluster, ro: Obj, replicas: int) -> None:
    """Set the referenced Deployment's replicas through its scale subresource (if they differ)."""
    ref = _deployment_ref(ro)
    if ref is None:
        return
    namespace = str(ro["metadata"].get("namespace") or "default")
    name = str(ref.get("name"))
    try:
        if cluster.get_scale(*_DEPLOYMENT, name, namespace)["spec"]["replicas"] == replicas:
            return
        cluster.update_scale(
            *_DEPLOYMENT, name, namespace, replicas=replicas, field_manager=WORKLOAD_FIELD_MANAGER
        )
    except NotFound:
        return  # deleted meanwhile: the next reconcile reports it


def referencing_rollouts(cluster: Cluster, deployment: Mapping[str, Any]) -> list[str]:
    """Names of the Rollouts whose workloadRef is this Deployment (a change wakes them)."""
    meta = deployment.get("metadata") or {}
    namespace = str(meta.get("namespace") or "default")
    return [
        str(ro["metadata"]["name"])
        for ro in cluster.list("argoproj.io/v1alpha1", "Rollout", namespace=namespace)
        if (ref := _deployment_ref(ro)) is not None and ref.get("name") == meta.get("name")
    ]
