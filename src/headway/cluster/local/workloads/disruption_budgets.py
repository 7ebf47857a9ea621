"""The PodDisruptionBudget status controller: what `kubectl get pdb` and Argo CD's health read.

Status (`disruption_budget.budget_status` for the numbers): `expectedPods`,
`currentHealthy`, `desiredHealthy`, `disruptionsAllowed`, `observedGeneration`, and the
condition `DisruptionAllowed` (True `SufficientPods` / False `InsufficientPods`), whose
transition time is kept while its status holds.
"""

from __future__ import annotations

from typing import Any

from headway.clock import Clock
from headway.cluster.local.api.disruption_budget import budget_status
from headway.cluster.local.workloads.recorder import reconcile_each
from headway.cluster.protocol import Cluster
from headway.kubetime import format_time
from headway.model.obj import Obj

__all__ = ["reconcile_disruption_budget", "sync_disruption_budgets"]


def reconcile_disruption_budget(cluster: Cluster, clock: Clock, pdb: Obj) -> float | None:
    meta = pdb["metadata"]
    namespace = meta.get("namespace") or "default"
    numbers = budget_status(pdb, cluster.list("v1", "Pod", namespace=namespace))
    before = pdb.get("status") or {}
    allowed = numbers.allowed > 0
    old: dict[str, Any] = next((c for c in before.get("conditions") or []
                if c.get("type") == "DisruptionAllowed"), {})
    flag = "True" if allowed else "False"
    status = {
        "observedGeneration": meta.get("generation", 1),
        "disruptionsAllowed": numbers.allowed,
        "currentHealthy": numbers.healthy,
        "desiredHealthy": numbers.desired,
        "expectedPods": numbers.expected,
        "conditions": [{
            "type": "DisruptionAllowed", "status": flag,
            "reason": "SufficientPods" if allowed else "InsufficientPods",
            "message": "",
            "observedGeneration": meta.get("generation", 1),
            "lastTransitionTime": (old.get("lastTransitionTime") if old.get("status") == flag
                                   else None) or format_time(clock.now()),
        }],
    }
    if status != before:
        cluster.patch_status("policy/v1", "PodDisruptionBudget", meta["name"], namespace, status)
    return None


def sync_disruption_budgets(cluster: Cluster, clock: Clock) -> float | None:
    return reconcile_each(cluster, clock, cluster.list("policy/v1", "PodDisruptionBudget"),
                          lambda pdb: reconcile_disruption_budget(cluster, clock, pdb))
