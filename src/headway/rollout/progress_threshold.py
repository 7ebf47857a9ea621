"""`replicaProgressThreshold`: how many of a step's canary pods must be available before the
step (its weight, its completion, the final promotion) counts as reached. Purely
computational.

Argo's rule: without a threshold (or with a negative value) every desired pod must be
available. `{type: Percent, value: P}` is met once available / desired >= P % (always met
when no pod is desired); `{type: Pods, value: N}` once N pods are available. The threshold
only ever lowers the bar: having every desired pod available always meets it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["progress_reached"]


def progress_reached(threshold: Mapping[str, Any] | None, *, available: int, desired: int) -> bool:
    if available >= desired:
        return True
    value = (threshold or {}).get("value")
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        return False
    if (threshold or {}).get("type") == "Percent":
        return desired == 0 or available * 100 >= value * desired
    return available >= value
