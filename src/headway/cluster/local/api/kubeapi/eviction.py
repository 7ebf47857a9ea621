"""`POST .../pods/NAME/eviction` (policy/v1 Eviction): delete a Pod unless that would break
its PodDisruptionBudget, which is answered 429 `TooManyRequests` with the budget's numbers
in the Status' causes, as the Kubernetes API server answers (`kubectl drain` retries on it).
The budget is computed from the Pods as they are now (`disruption_budget`), so two quick
evictions see each other: the first Pod is Terminating and no longer counts as healthy.
"""

from __future__ import annotations

from headway.cluster.local.api.disruption_budget import eviction_refusal
from headway.cluster.local.api.kubeapi.operations import Request
from headway.cluster.local.api.kubeapi.status import ApiError, success_body
from headway.cluster.local.api.store import LocalCluster
from headway.model.obj import Obj

__all__ = ["evict"]

_VIOLATION = "Cannot evict pod as it would violate the pod's disruption budget."


def evict(cluster: LocalCluster, req: Request) -> Obj:
    namespace = req.path.namespace or "default"
    pod = cluster.get("v1", "Pod", req.path.name, namespace)
    refusal = eviction_refusal(
        pod,
        cluster.list("policy/v1", "PodDisruptionBudget", namespace=namespace),
        cluster.list("v1", "Pod", namespace=namespace),
    )
    if refusal is not None and refusal.code == 429:
        raise ApiError(429, "TooManyRequests", _VIOLATION,
                       causes=[{"reason": "DisruptionBudget", "message": refusal.message}])
    if refusal is not None:
        raise ApiError(refusal.code, "InternalError", refusal.message)
    if not req.dry_run:
        cluster.delete("v1", "Pod", req.path.name, namespace)
    return success_body(req.target, str(pod["metadata"].get("uid", "")))
