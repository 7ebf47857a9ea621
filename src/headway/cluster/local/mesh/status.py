"""The status the local mesh writes on a VirtualService, so `headway describe` can show it.

Purely computational. Istio itself writes only conditions and validation messages; the mesh
adds what a user debugging a canary wants to see: which router, its address, the weight and
the endpoints of each destination, the header and mirror routes in force, and what it could
not realize.

    status:
      router: embedded
      address: 127.0.0.1:41877
      observedGeneration: 3
      destinations:
      - {service: checkout-stable, role: stable, weight: 90,
         endpoints: [{pod, address, podTemplateHash}]}
      - {service: checkout-canary, role: canary, weight: 10, endpoints: [...]}
      headerRoutes:
      - {name: canary-header, service: checkout-canary, match: ["x-canary exact always"]}
      mirrorRoutes:                     # only while there are some
      - {name: shadow, service: checkout-canary, percentage: 50.0,
         match: [":method exact POST and :path prefix /color"]}
      unsupported: ["spec.http[2]: after the catch-all route, never reached"]
      conditions: [{type: Ready, status: "True", reason: Realized, message: ...}]
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from headway.cluster.local.mesh.plan import HeaderCondition, MeshPlan
from headway.cluster.local.mesh.plane import PlaneConfig, PlaneDestination
from headway.kubetime import format_time

__all__ = [
    "error_status",
    "keep_transition_times",
    "realized_status",
    "same_status",
    "weights_summary",
]

Status = dict[str, Any]


def _destination(dest: PlaneDestination, role: str, weight: int) -> dict[str, Any]:
    return {
        "service": dest.service,
        "role": role,
        "weight": weight,
        "endpoints": [
            {"pod": e.pod, "address": f"{e.host}:{e.port}", "podTemplateHash": e.pod_template_hash}
            for e in dest.endpoints
        ],
    }


def weights_summary(plan: MeshPlan, config: PlaneConfig) -> str:
    """`checkout-stable 90%, checkout-canary 10%` (Services with a share or a header route)."""
    parts = [f"{config.stable.service} {plan.stable_weight}%"]
    if config.canary.service:
        parts.append(f"{config.canary.service} {plan.canary_weight}%")
    parts += [f"{d.service} {w}%" for d, w in zip(config.additional, config.additional_weights,
                                                   strict=True)]
    return ", ".join(parts)


def _condition(status: str, reason: str, message: str, now: datetime) -> dict[str, Any]:
    return {
        "type": "Ready",
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": format_time(now),
    }


def realized_status(
    *,
    plan: MeshPlan,
    config: PlaneConfig,
    router: str,
    address: str,
    generation: int,
    now: datetime,
) -> Status:
    destinations = [_destination(config.stable, "stable", plan.stable_weight)]
    if config.canary.service:
        destinations.append(_destination(config.canary, "canary", plan.canary_weight))
    destinations += [
        _destination(d, "additional", w)
        for d, w in zip(config.additional, config.additional_weights, strict=True)
    ]
    status: Status = {
        "router": router,
        "address": address,
        "observedGeneration": generation,
        "destinations": destinations,
        "headerRoutes": [
            {
                "name": r.name,
                "service": config.canary.service,
                "match": [f"{c.header} {c.kind} {c.value}" for c in r.conditions],
            }
            for r in config.header_routes
        ],
    }
    if config.mirror_routes:
        status["mirrorRoutes"] = [
            {
                "name": m.name,
                "service": config.canary.service,
                "percentage": m.percentage,
                "match": [_conditions(e) for e in m.matches],
            }
            for m in config.mirror_routes
        ]
    if plan.unsupported:
        status["unsupported"] = list(plan.unsupported)
    message = f"{router} router at {address}: {weights_summary(plan, config)}"
    empty = [d["service"] for d in destinations if d["weight"] > 0 and not d["endpoints"]]
    if empty:
        message += f" (no ready endpoint behind {', '.join(empty)}: its share answers 503)"
    if config.mirror_routes and not config.canary.endpoints:
        message += f" (mirror routes copy to {config.canary.service or 'no canary'}, which has "
        message += "no ready endpoint: nothing is copied)"
    reason = "PartiallyRealized" if plan.unsupported else "Realized"
    status["conditions"] = [_condition("True", reason, message, now)]
    return status


def _conditions(entry: tuple[HeaderCondition, ...]) -> str:
    return " and ".join(f"{c.header} {c.kind} {c.value}" for c in entry) or "any request"


def error_status(
    previous: Mapping[str, Any], *, reason: str, message: str, generation: int, now: datetime
) -> Status:
    """The previous status (what is still being served) with a failed Ready condition."""
    status = dict(previous)
    status["observedGeneration"] = generation
    status["conditions"] = [_condition("False", reason, message, now)]
    return status


def _without_times(status: Mapping[str, Any]) -> dict[str, Any]:
    stripped = dict(status)
    stripped["conditions"] = [
        {k: v for k, v in c.items() if k != "lastTransitionTime"}
        for c in status.get("conditions") or []
        if isinstance(c, dict)
    ]
    return stripped


def same_status(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """Equal apart from condition timestamps (so an unchanged status is not rewritten)."""
    return _without_times(old) == _without_times(new)


def keep_transition_times(old: Mapping[str, Any], new: Status) -> Status:
    """`new` with each condition's `lastTransitionTime` from `old` where its status is unchanged."""
    before = {
        (c.get("type"), c.get("status")): c.get("lastTransitionTime")
        for c in old.get("conditions") or []
        if isinstance(c, dict)
    }
    conditions = []
    for condition in new.get("conditions") or []:
        kept = before.get((condition.get("type"), condition.get("status")))
        conditions.append({**condition, "lastTransitionTime": kept} if kept else condition)
    return {**new, "conditions": conditions}
