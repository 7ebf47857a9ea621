"""PodDisruptionBudget arithmetic (policy/v1) and the eviction verdict. Purely computational.

    expectedPods        the budget's selected Pods that have not finished
    currentHealthy      those of them that are Ready
    desiredHealthy      minAvailable (a percentage of expectedPods, rounded up), or
                        expectedPods - maxUnavailable (a percentage rounded up)
    disruptionsAllowed  max(0, currentHealthy - desiredHealthy)

An eviction of a Pod selected by one budget is allowed when that budget's
`disruptionsAllowed` is above 0, or when the Pod is not Ready and the budget is already met
(`unhealthyPodEvictionPolicy: IfHealthyBudget`, the default; `AlwaysAllow` always lets a
not-Ready Pod go). A Pod selected by more than one budget cannot be evicted (as Kubernetes
answers). Finished Pods always can.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from headway.kube.pod_facts import is_ready
from headway.model.obj import Obj
from headway.model.selectors import SelectorError, selector_from_object

__all__ = ["BudgetStatus", "Refusal", "budget_status", "eviction_refusal", "selects"]


@dataclass(frozen=True)
class Refusal:
    code: int  # 429: the budget would be broken; 500: more than one budget (as Kubernetes)
    message: str


@dataclass(frozen=True)
class BudgetStatus:
    expected: int
    healthy: int
    desired: int

    @property
    def allowed(self) -> int:
        return max(0, self.healthy - self.desired)


def selects(pdb: Mapping[str, Any], pod: Mapping[str, Any]) -> bool:
    meta = pod.get("metadata") or {}
    if meta.get("namespace") != (pdb.get("metadata") or {}).get("namespace"):
        return False
    raw = (pdb.get("spec") or {}).get("selector")
    if not isinstance(raw, Mapping):
        return False
    try:
        selector = selector_from_object(raw, path="spec.selector")
    except SelectorError:
        return False
    return selector.matches(meta.get("labels") or {})  # policy/v1: {} selects every Pod


def _finished(pod: Mapping[str, Any]) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def _scaled(raw: object, total: int) -> int:
    """An int-or-percent against `total`, percentages rounded up."""
    if isinstance(raw, str) and raw.endswith("%"):
        return math.ceil(int(raw[:-1]) * total / 100)
    return int(raw) if isinstance(raw, int | str) and str(raw).isdigit() else 0


def budget_status(pdb: Mapping[str, Any], pods: Sequence[Obj]) -> BudgetStatus:
    mine = [p for p in pods if selects(pdb, p) and not _finished(p)
            and not (p.get("metadata") or {}).get("deletionTimestamp")]
    expected, healthy = len(mine), sum(1 for p in mine if is_ready(p))
    spec = pdb.get("spec") or {}
    if spec.get("maxUnavailable") is not None:
        desired = max(0, expected - _scaled(spec["maxUnavailable"], expected))
    else:
        desired = _scaled(spec.get("minAvailable", 1), expected)
    return BudgetStatus(expected=expected, healthy=healthy, desired=desired)


def eviction_refusal(pod: Obj, budgets: Sequence[Obj], pods: Sequence[Obj]) -> Refusal | None:
    """Why evicting `pod` would break a budget (None when it may go)."""
    if _finished(pod):
        return None
    mine = [b for b in budgets if selects(b, pod)]
    if len(mine) > 1:
        return Refusal(500, "This pod has more than one PodDisruptionBudget, which the "
                            "eviction subresource does not support.")
    if not mine:
        return None
    budget = mine[0]
    status = budget_status(budget, pods)
    policy = (budget.get("spec") or {}).get("unhealthyPodEvictionPolicy", "IfHealthyBudget")
    if not is_ready(pod) and (policy == "AlwaysAllow" or status.healthy >= status.desired):
        return None
    if status.allowed > 0:
        return None
    name = (budget.get("metadata") or {}).get("name")
    return Refusal(429, f"The disruption budget {name} needs {status.desired} healthy pods "
                        f"and has {status.healthy} currently")
