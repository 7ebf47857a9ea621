"""Measured values as text, the way Argo Rollouts stores them in `measurements[].value`."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

__all__ = ["float_text", "json_text", "vector_text"]


def float_text(number: float) -> str:
    """Go's `strconv.FormatFloat(x, 'f', -1, 64)`: shortest digits, never an exponent."""
    if math.isnan(number):
        return "NaN"
    if math.isinf(number):
        return "+Inf" if number > 0 else "-Inf"
    text = format(Decimal(repr(float(number))), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def vector_text(numbers: Sequence[float]) -> str:
    """A Prometheus vector as Argo writes it: `[0.5,1]`."""
    return "[" + ",".join(float_text(n) for n in numbers) + "]"


def json_text(value: Any) -> str:
    """A JSON value in compact form (Go's json.Marshal)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=True)
