"""The spec a HorizontalPodAutoscaler asks for and the status it is given, as Kubernetes writes it.

Purely computational. The conditions come in Kubernetes' order — AbleToScale, ScalingActive,
ScalingLimited — with the reasons and messages its controller uses, so Headway's HPA health
(and Argo CD's) reads them as it reads a cluster's; a condition keeps its
`lastTransitionTime` while its status stays the same.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from headway.model.obj import Obj
from headway.model.quantities import QuantityError, parse_quantity

__all__ = ["Condition", "ResourceTarget", "conditions_json", "limited_message", "resource_targets"]


@dataclass(frozen=True)
class ResourceTarget:
    """One `type: Resource` metric: `cpu` or `memory`, by utilization (%) or average value."""

    resource: str
    utilization: bool
    target: float  # percent of request, or cores / bytes per Pod

    def current_json(self, value: float) -> dict[str, Any]:
        current: dict[str, Any] = (
            {"averageUtilization": round(value), "averageValue": None}
            if self.utilization else {"averageValue": _quantity(self.resource, value)})
        return {"type": "Resource",
                "resource": {"name": self.resource,
                             "current": {k: v for k, v in current.items() if v is not None}}}


@dataclass(frozen=True)
class Condition:
    type: str
    status: bool
    reason: str
    message: str


_DEFAULT_METRIC = ResourceTarget("cpu", utilization=True, target=80.0)


def resource_targets(spec: Mapping[str, Any]) -> tuple[ResourceTarget, ...]:
    """The Resource metrics of `spec.metrics` (80% CPU when none is given, as Kubernetes);
    a ValueError naming the field for what the runtime cannot measure or read."""
    metrics = spec.get("metrics")
    if not metrics:
        return (_DEFAULT_METRIC,)
    if not isinstance(metrics, list):
        raise ValueError("spec.metrics: must be a list")
    return tuple(_target(m, f"spec.metrics[{i}]") for i, m in enumerate(metrics))


def _target(metric: Any, where: str) -> ResourceTarget:
    kind = metric.get("type") if isinstance(metric, Mapping) else None
    if kind != "Resource":
        raise ValueError(f"{where}.type: {kind!r} metrics are not served by the local runtime "
                         "(only Resource: cpu and memory)")
    resource = metric.get("resource") or {}
    name, target = resource.get("name"), resource.get("target") or {}
    if name not in ("cpu", "memory"):
        raise ValueError(f"{where}.resource.name: {name!r} (cpu or memory)")
    if target.get("type") == "Utilization" and isinstance(target.get("averageUtilization"), int):
        return ResourceTarget(name, utilization=True, target=float(target["averageUtilization"]))
    if target.get("type") == "AverageValue":
        try:
            return ResourceTarget(name, utilization=False,
                                  target=float(parse_quantity(target.get("averageValue"))))
        except QuantityError as err:
            raise ValueError(f"{where}.resource.target.averageValue: {err}") from err
    raise ValueError(f"{where}.resource.target: Utilization with averageUtilization or "
                     "AverageValue with averageValue")


def _quantity(resource: str, value: float) -> str:
    return f"{round(value * 1000)}m" if resource == "cpu" else str(round(value))


_LIMITED = {
    "DesiredWithinRange": "the desired count is within the acceptable range",
    "TooManyReplicas": "the desired replica count is more than the maximum replica count",
    "TooFewReplicas": "the desired replica count is less than the minimum replica count",
    "ScaleUpLimit": "the desired replica count is increasing faster than the maximum scale rate",
    "ScaleDownLimit": "the desired replica count is decreasing faster than the maximum scale rate",
}


def limited_message(reason: str) -> Condition:
    return Condition("ScalingLimited", reason != "DesiredWithinRange", reason, _LIMITED[reason])


def conditions_json(
    conditions: Sequence[Condition], before: Sequence[Any], *, now: str
) -> list[Obj]:
    """`conditions` as status JSON, each keeping the transition time it had with this status."""
    earlier = {c.get("type"): c for c in before if isinstance(c, Mapping)}
    written: list[Obj] = []
    for condition in conditions:
        status = "True" if condition.status else "False"
        old = earlier.get(condition.type) or {}
        since = old.get("lastTransitionTime") if old.get("status") == status else None
        written.append({"type": condition.type, "status": status,
                        "lastTransitionTime": since or now, "reason": condition.reason,
                        "message": condition.message})
    return written
