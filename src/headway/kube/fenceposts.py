"""maxSurge / maxUnavailable resolution, as Kubernetes and Argo Rollouts compute it.

An int-or-percent value is resolved against the desired replica count: a surge percentage
rounds up, an unavailable percentage rounds down. When both resolve to zero, maxUnavailable
becomes 1, so that a rollout can always make progress even where a surge is not possible.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["Fenceposts", "IntOrPercent", "resolve_fenceposts", "resolve_int_or_percent"]

IntOrPercent = int | str


def resolve_int_or_percent(value: IntOrPercent, total: int, *, round_up: bool) -> int:
    """`3` -> 3; `"25%"` of 10 -> 3 when rounding up, 2 when rounding down.

    A bare numeric string (`"25"`) is read as a percentage, as Argo Rollouts' defaults are.
    """
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not an int or a percentage")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"{value} must not be negative")
        return value
    text = value.strip()
    number = text[:-1] if text.endswith("%") else text
    try:
        percent = float(number)
    except ValueError:
        raise ValueError(f"{value!r} is not an int or a percentage") from None
    if percent < 0:
        raise ValueError(f"{value!r} must not be negative")
    exact = percent * total / 100
    return math.ceil(exact) if round_up else math.floor(exact)


@dataclass(frozen=True)
class Fenceposts:
    max_surge: int
    max_unavailable: int


def resolve_fenceposts(
    max_surge: IntOrPercent, max_unavailable: IntOrPercent, replicas: int
) -> Fenceposts:
    """Resolve both limits for `replicas`; never both zero; unavailable capped at replicas."""
    if replicas == 0:
        return Fenceposts(resolve_int_or_percent(max_surge, 0, round_up=True), 0)
    surge = resolve_int_or_percent(max_surge, replicas, round_up=True)
    unavailable = resolve_int_or_percent(max_unavailable, replicas, round_up=False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return Fenceposts(surge, min(unavailable, replicas))
