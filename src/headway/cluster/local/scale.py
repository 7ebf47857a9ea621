"""The scale subresource of the local store: which kinds have one and what it reads.

Kubernetes serves `/scale` for Deployments, ReplicaSets and StatefulSets, and for custom
kinds whose CRD declares it (Argo's Rollout does: `spec.replicas`, `status.HPAReplicas`,
`status.selector`). A Scale is an `autoscaling/v1` object naming its parent; writing
`spec.replicas` through it writes the parent's `spec.replicas`. Pure functions only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from headway.cluster.errors import Invalid, NotFound
from headway.cluster.protocol import Obj
from headway.model.schema import describe
from headway.model.selectors import SelectorError, selector_from_object

__all__ = ["ScaleFields", "scale_fields", "scale_of", "with_replicas"]


@dataclass(frozen=True)
class ScaleFields:
    """Where a scalable kind keeps what its Scale shows."""

    status_replicas: str  # a key of `status`
    selector_in_status: bool  # the selector string is `status.selector` (else `spec.selector`)


_WORKLOADS = ScaleFields(status_replicas="replicas", selector_in_status=False)
_SCALABLE: dict[tuple[str, str], ScaleFields] = {
    ("apps", "Deployment"): _WORKLOADS,
    ("apps", "ReplicaSet"): _WORKLOADS,
    ("apps", "StatefulSet"): _WORKLOADS,
    ("argoproj.io", "Rollout"): ScaleFields(status_replicas="HPAReplicas",
                                            selector_in_status=True),
}


def scale_fields(group: str, kind: str) -> ScaleFields:
    """The scale fields of a kind, or `NotFound` (as the API answers for a missing `/scale`)."""
    found = _SCALABLE.get((group, kind))
    if found is None:
        raise NotFound(f"{kind} has no scale subresource")
    return found


def scale_of(obj: Mapping[str, Any], fields: ScaleFields) -> Obj:
    """The `autoscaling/v1` Scale of `obj`. An unset `spec.replicas` reads as 1, the
    default a Kubernetes API server writes into every such object."""
    meta = obj.get("metadata") or {}
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    identity = {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion",
                                     "creationTimestamp") if k in meta}
    return {
        "apiVersion": "autoscaling/v1",
        "kind": "Scale",
        "metadata": identity,
        "spec": {"replicas": int(spec.get("replicas", 1))},
        "status": {
            "replicas": int(status.get(fields.status_replicas) or 0),
            "selector": _selector_text(obj, fields),
        },
    }


def _selector_text(obj: Mapping[str, Any], fields: ScaleFields) -> str:
    if fields.selector_in_status:
        return str((obj.get("status") or {}).get("selector") or "")
    selector = (obj.get("spec") or {}).get("selector")
    if not isinstance(selector, Mapping):
        return ""
    try:
        return str(selector_from_object(selector, path="spec.selector"))
    except SelectorError:
        return ""  # a malformed selector selects nothing; the workload reports it


def with_replicas(content: Mapping[str, Any], replicas: object, *, where: str) -> dict[str, Any]:
    """`content` (an object's managed part) with `spec.replicas` set to `replicas`."""
    if isinstance(replicas, bool) or not isinstance(replicas, int) or replicas < 0:
        raise Invalid(f"{where}: Scale spec.replicas: must be a non-negative integer, "
                      f"got {describe(replicas)}")
    spec = dict(content.get("spec") or {})
    spec["replicas"] = replicas
    return dict(content, spec=spec)
