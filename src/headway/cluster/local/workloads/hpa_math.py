"""The replica arithmetic of a HorizontalPodAutoscaler (autoscaling/v2), as Kubernetes does it.

Purely computational, no side effects. Three stages, in the order the Kubernetes controller
runs them:

1. `metric_proposal` — one Resource metric's proposal. With `ratio = usage / target`
   (utilization: the pods' summed usage over their summed requests, in percent, against
   `averageUtilization`; average value: the summed usage over the pod count against
   `averageValue`):
       within tolerance (|1 - ratio| <= 0.1)   -> the current replicas
       otherwise                               -> ceil(ratio * pods with metrics)
   Pods without a sample count as using nothing when the ratio says "up" and as using all
   they request (the target, for average values) when it says "down"; CPU of a Pod that is
   not ready counts as nothing on the way up. The ratio is then computed again with them
   and a proposal that would reverse direction keeps the current size.
2. `stabilized` — the recommendation the stabilization windows allow: up to the lowest
   recommendation of the last `scaleUp.stabilizationWindowSeconds` (default 0) and down to
   the highest of the last `scaleDown.stabilizationWindowSeconds` (default 300).
3. `rate_limited` — the `behavior` policies: over each policy's `periodSeconds` the size may
   change by `Pods` replicas or `Percent` of the size at the start of the period; with
   `selectPolicy: Max` (the default) the policy allowing the most change wins, with `Min` the
   least, `Disabled` allows none. Then `minReplicas`/`maxReplicas` clamp, and the reason
   names which limit held (`ScalingLimited`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "TOLERANCE",
    "Behavior",
    "Direction",
    "Limited",
    "PodSample",
    "Policy",
    "Recommendation",
    "ScaleEvent",
    "metric_proposal",
    "parse_behavior",
    "rate_limited",
    "stabilized",
]

TOLERANCE = 0.1
_WITHIN = "DesiredWithinRange"


@dataclass(frozen=True)
class PodSample:
    """One Pod as a Resource metric sees it: its usage (None: no sample yet) and request."""

    name: str
    usage: float | None
    request: float | None  # the Pod's summed container requests; None: some container has none
    ready: bool = True


@dataclass(frozen=True)
class Policy:
    kind: str  # "Pods" | "Percent"
    value: int
    period_seconds: int


@dataclass(frozen=True)
class Direction:
    window_seconds: int
    select: str  # "Max" | "Min" | "Disabled"
    policies: tuple[Policy, ...]


@dataclass(frozen=True)
class Behavior:
    up: Direction
    down: Direction


@dataclass(frozen=True)
class Recommendation:
    replicas: int
    at: float  # monotonic seconds


@dataclass(frozen=True)
class ScaleEvent:
    change: int  # replicas added (> 0) or removed (< 0)
    at: float


@dataclass(frozen=True)
class Limited:
    replicas: int
    # DesiredWithinRange | ScaleUpLimit | ScaleDownLimit | TooManyReplicas | TooFewReplicas
    reason: str


_DEFAULT_UP = Direction(0, "Max", (Policy("Pods", 4, 15), Policy("Percent", 100, 15)))
_DEFAULT_DOWN = Direction(300, "Max", (Policy("Percent", 100, 15),))


def parse_behavior(raw: object) -> Behavior:
    """`spec.behavior` with Kubernetes' defaults for whatever is left out."""
    spec = raw if isinstance(raw, Mapping) else {}
    return Behavior(up=_direction(spec.get("scaleUp"), _DEFAULT_UP),
                    down=_direction(spec.get("scaleDown"), _DEFAULT_DOWN))


def _direction(raw: object, default: Direction) -> Direction:
    if not isinstance(raw, Mapping):
        return default
    window = raw.get("stabilizationWindowSeconds")
    policies = tuple(_policy(p) for p in raw.get("policies") or [] if isinstance(p, Mapping))
    select = raw.get("selectPolicy")
    return Direction(window_seconds=window if isinstance(window, int) else default.window_seconds,
                     select=select if select in ("Max", "Min", "Disabled") else "Max",
                     policies=policies or default.policies)


def _policy(raw: Mapping[str, Any]) -> Policy:
    return Policy(kind=str(raw.get("type", "Pods")), value=int(raw.get("value", 0)),
                  period_seconds=int(raw.get("periodSeconds", 15)))


def metric_proposal(
    samples: Sequence[PodSample], *, target: float, utilization: bool, current: int
) -> tuple[int, float]:
    """(replicas this metric proposes, its current value: percent of request or average)."""
    measured = [s for s in samples if s.usage is not None and s.ready]
    if not measured:
        raise ValueError("did not receive metrics for any ready pod")
    value, ratio = _ratio(measured, target=target, utilization=utilization)
    unmeasured = [s for s in samples if s.usage is None or not s.ready]
    if not unmeasured:
        if abs(1.0 - ratio) <= TOLERANCE:
            return current, value
        return math.ceil(ratio * len(measured)), value
    filled = [*measured, *(_assumed(s, up=ratio > 1.0, target=target, utilization=utilization)
                           for s in unmeasured if s.usage is None or ratio > 1.0)]
    _, new_ratio = _ratio(filled, target=target, utilization=utilization)
    if abs(1.0 - new_ratio) <= TOLERANCE or (ratio > 1.0) != (new_ratio > 1.0):
        return current, value
    proposal = math.ceil(new_ratio * len(filled))
    if (new_ratio > 1.0 and proposal < current) or (new_ratio < 1.0 and proposal > current):
        return current, value
    return proposal, value


def _ratio(
    samples: Sequence[PodSample], *, target: float, utilization: bool
) -> tuple[float, float]:
    usage = sum(s.usage or 0.0 for s in samples)
    if utilization:
        requested = sum(s.request or 0.0 for s in samples)
        percent = usage * 100.0 / requested
        return percent, percent / target
    average = usage / len(samples)
    return average, average / target


def _assumed(sample: PodSample, *, up: bool, target: float, utilization: bool) -> PodSample:
    if up:
        return PodSample(sample.name, 0.0, sample.request)
    full = (sample.request or 0.0) if utilization else target
    return PodSample(sample.name, full, sample.request)


def stabilized(
    proposal: int, *, current: int, history: Sequence[Recommendation], behavior: Behavior,
    now: float,
) -> int:
    """The recommendation the windows allow: never above the lowest recommendation of the
    scale-up window nor below the highest of the scale-down window (`proposal` included)."""
    up_bound = down_bound = proposal
    for rec in history:
        if rec.at > now - behavior.up.window_seconds:
            up_bound = min(up_bound, rec.replicas)
        if rec.at > now - behavior.down.window_seconds:
            down_bound = max(down_bound, rec.replicas)
    return min(max(current, up_bound), down_bound)


def rate_limited(
    desired: int, *, current: int, events: Sequence[ScaleEvent], behavior: Behavior,
    now: float, min_replicas: int, max_replicas: int,
) -> Limited:
    """`desired` held within what the policies allow now and within min/max."""
    if desired > current:
        limit = max(current, _up_limit(current, events, behavior.up, now))
        ceiling, reason = (limit, "ScaleUpLimit") if limit < max_replicas else (
            max_replicas, "TooManyReplicas")
        return Limited(ceiling, reason) if desired > ceiling else Limited(desired, _WITHIN)
    if desired < current:
        limit = min(current, _down_limit(current, events, behavior.down, now))
        floor, reason = (limit, "ScaleDownLimit") if limit > min_replicas else (
            min_replicas, "TooFewReplicas")
        return Limited(floor, reason) if desired < floor else Limited(desired, _WITHIN)
    return Limited(desired, _WITHIN)


def _in_period(events: Sequence[ScaleEvent], period: int, now: float) -> tuple[int, int]:
    recent = [e for e in events if e.at > now - period]
    added = sum(e.change for e in recent if e.change > 0)
    return added, -sum(e.change for e in recent if e.change < 0)


def _up_limit(current: int, events: Sequence[ScaleEvent], rules: Direction, now: float) -> int:
    if rules.select == "Disabled":
        return current
    proposals = []
    for policy in rules.policies:
        added, removed = _in_period(events, policy.period_seconds, now)
        start = current - added + removed
        proposals.append(start + policy.value if policy.kind == "Pods"
                         else math.ceil(start * (1 + policy.value / 100)))
    return (min if rules.select == "Min" else max)(proposals)


def _down_limit(current: int, events: Sequence[ScaleEvent], rules: Direction, now: float) -> int:
    if rules.select == "Disabled":
        return current
    proposals = []
    for policy in rules.policies:
        added, removed = _in_period(events, policy.period_seconds, now)
        start = current + removed - added
        proposals.append(start - policy.value if policy.kind == "Pods"
                         else int(start * (1 - policy.value / 100)))
    return (max if rules.select == "Min" else min)(proposals)
