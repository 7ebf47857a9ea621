"""The `bit*` builtins on 64-bit integers, and `duration("1m30s")`, as expr-lang has them.

Headway keeps its stricter integer rule here too: `bitshl` whose result leaves 64 bits is an
error, where Go silently drops the high bits (and can turn a positive number negative).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Any

from headway.expr.errors import EvalProblem
from headway.expr.signature import Builtin, need_int, need_string
from headway.expr.values import INT64_MAX, Duration, checked_int

__all__ = ["BIT_AND_DURATION_FUNCTIONS", "parse_go_duration"]

_UINT64 = (1 << 64) - 1
_UNIT_NANOSECONDS = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,  # U+00B5 micro sign
    "μs": 1_000,  # U+03BC Greek small letter mu
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60_000_000_000,
    "h": 3_600_000_000_000,
}
_PART = re.compile(r"([0-9]*(?:\.[0-9]*)?)([^0-9.]+)")


def _shift_count(name: str, value: Any) -> int:
    count = need_int(name, value)
    if count < 0:
        raise EvalProblem(f"invalid operation: negative shift count {count} (type int)")
    return count


def _bits(name: str, combine: Callable[[int, int], int]) -> Builtin:
    def call(args: list[Any]) -> int:
        return combine(need_int(name, args[0]), need_int(name, args[1]))

    return Builtin(name, 2, 2, call)


def _shift(name: str, move: Callable[[int, int], int]) -> Builtin:
    def call(args: list[Any]) -> int:
        return move(need_int(name, args[0]), _shift_count(name, args[1]))

    return Builtin(name, 2, 2, call)


def _unsigned_shift_right(value: int, count: int) -> int:
    shifted = (value & _UINT64) >> count
    return shifted - (1 << 64) if shifted > INT64_MAX else shifted


def parse_go_duration(text: str) -> Duration:
    """Go's time.ParseDuration: `300ms`, `-1.5h`, `2h45m`; a bare `0` is zero."""
    body = text.removeprefix("-").removeprefix("+") if text[:1] in "+-" else text
    if body == "0":
        return Duration(0)
    if not body:
        raise EvalProblem(f"time: invalid duration {text!r}")
    total, position = Decimal(0), 0
    for match in _PART.finditer(body):
        number, unit = match.groups()
        if match.start() != position or number in ("", ".") or unit not in _UNIT_NANOSECONDS:
            problem = "unknown unit" if number and unit not in _UNIT_NANOSECONDS else "invalid"
            raise EvalProblem(f"time: {problem} duration {text!r}")
        try:
            total += Decimal(number) * _UNIT_NANOSECONDS[unit]
        except InvalidOperation:  # pragma: no cover - the pattern admits only decimals
            raise EvalProblem(f"time: invalid duration {text!r}") from None
        position = match.end()
    if position != len(body):
        raise EvalProblem(f"time: invalid duration {text!r}")
    nanoseconds = int(total) * (-1 if text.startswith("-") else 1)
    if abs(nanoseconds) > INT64_MAX:
        raise EvalProblem(f"time: invalid duration {text!r} (out of range)")
    return Duration(nanoseconds)


BIT_AND_DURATION_FUNCTIONS = (
    _bits("bitand", lambda x, y: x & y),
    _bits("bitor", lambda x, y: x | y),
    _bits("bitxor", lambda x, y: x ^ y),
    _bits("bitnand", lambda x, y: x & ~y),
    Builtin("bitnot", 1, 1, lambda args: ~need_int("bitnot", args[0])),
    _shift("bitshl", lambda x, count: checked_int(x << min(count, 64))),
    _shift("bitshr", lambda x, count: x >> count),
    _shift("bitushr", _unsigned_shift_right),
    Builtin("duration", 1, 1, lambda args: parse_go_duration(need_string("duration", args[0]))),
)
