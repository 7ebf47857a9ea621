"""What each operator does to plain values, with expr-lang's typing rules.

Every function raises `EvalProblem` on a type it does not accept; the calling node turns it into
an `EvaluationError` that names the sub-expression. Differences from expr-lang are deliberate and
listed in docs/conditions.md: `/` and `%` by zero are errors (Go gives Inf or NaN for `/`, which
a failureCondition would read as "not failed"), and integer overflow is an error, not wrap-around.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import re2  # type: ignore[import-untyped]

from headway.expr.errors import EvalProblem
from headway.expr.values import (
    Duration,
    checked_int,
    describe_value,
    is_list,
    is_map,
    is_number,
    strict_equal,
    type_name,
    values_equal,
)

__all__ = ["BINARY", "RANGE_LIMIT", "compile_regex", "exponent", "make_range", "negate"]

RANGE_LIMIT = 100_000
"""The longest array `a..b` may build, so one condition cannot exhaust memory."""

_REGEX_OPTIONS = re2.Options()
_REGEX_OPTIONS.log_errors = False


def _mismatch(op: str, left: Any, right: Any) -> EvalProblem:
    return EvalProblem(
        f"invalid operation: {type_name(left)} {op} {type_name(right)} "
        f"({describe_value(left)} {op} {describe_value(right)})"
    )


def _add(left: Any, right: Any) -> Any:
    if type(left) is int and type(right) is int:
        return checked_int(left + right)
    if is_number(left) and is_number(right):
        return float(left) + float(right)
    if isinstance(left, str) and isinstance(right, str):
        return left + right
    if isinstance(left, Duration) and isinstance(right, Duration):
        return Duration(checked_int(left.nanoseconds + right.nanoseconds))
    raise _mismatch("+", left, right)


def _subtract(left: Any, right: Any) -> Any:
    if type(left) is int and type(right) is int:
        return checked_int(left - right)
    if is_number(left) and is_number(right):
        return float(left) - float(right)
    if isinstance(left, Duration) and isinstance(right, Duration):
        return Duration(checked_int(left.nanoseconds - right.nanoseconds))
    raise _mismatch("-", left, right)


def _multiply(left: Any, right: Any) -> Any:
    if type(left) is int and type(right) is int:
        return checked_int(left * right)
    if is_number(left) and is_number(right):
        return float(left) * float(right)
    raise _mismatch("*", left, right)


def _divide(left: Any, right: Any) -> Any:
    if not (is_number(left) and is_number(right)):
        raise _mismatch("/", left, right)
    if right == 0:
        raise EvalProblem(f"division by zero ({describe_value(left)} / {describe_value(right)})")
    return float(left) / float(right)


def _modulo(left: Any, right: Any) -> Any:
    if not (type(left) is int and type(right) is int):
        raise _mismatch("%", left, right)
    if right == 0:
        raise EvalProblem(f"modulo by zero ({left} % 0)")
    remainder = abs(left) % abs(right)  # Go truncates: the sign follows the dividend
    return -remainder if left < 0 else remainder


def exponent(left: Any, right: Any) -> float:
    """`**` and `^`: always a float, as Go's math.Pow, including its Inf and NaN cases."""
    if not (is_number(left) and is_number(right)):
        raise _mismatch("**", left, right)
    base, power = float(left), float(right)
    if base == 0 and power < 0:
        return math.copysign(math.inf, base) if _is_odd_integer(power) else math.inf
    if base < 0 and not power.is_integer() and math.isfinite(power):
        return math.nan
    try:
        return math.pow(base, power)
    except OverflowError:
        negative = base < 0 and _is_odd_integer(power)
        return -math.inf if negative else math.inf


def _is_odd_integer(value: float) -> bool:
    return value.is_integer() and math.isfinite(value) and int(value) % 2 == 1


def _compare(op: str, test: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
    def compare(left: Any, right: Any) -> bool:
        if (
            (is_number(left) and is_number(right))
            or (isinstance(left, str) and isinstance(right, str))
            or (isinstance(left, Duration) and isinstance(right, Duration))
        ):
            return test(left, right)
        raise _mismatch(op, left, right)

    return compare


def _contains_item(left: Any, right: Any) -> bool:
    """`in`: an element of an array, or a key of a map; nothing is in nil."""
    if right is None:
        return False
    if is_list(right):
        return any(values_equal(item, left) for item in right)
    if is_map(right):  # JSON objects have string keys; a groupBy result may have others
        return isinstance(left, str | int | float | bool) and left in right
    raise EvalProblem(f'operator "in" is not defined on {type_name(right)}')


def _strings(op: str, test: Callable[[str, str], bool]) -> Callable[[Any, Any], bool]:
    def check(left: Any, right: Any) -> bool:
        if isinstance(left, str) and isinstance(right, str):
            return test(left, right)
        raise _mismatch(op, left, right)

    return check


@lru_cache(maxsize=256)
def compile_regex(pattern: str) -> Any:
    """A compiled RE2 pattern: Go's regexp syntax, and linear time whatever the input."""
    try:
        return re2.compile(pattern, _REGEX_OPTIONS)
    except re2.error as err:
        message = err.args[0].decode() if err.args and isinstance(err.args[0], bytes) else err
        raise EvalProblem(f"invalid regular expression {pattern!r}: {message}") from None


def _matches(left: Any, right: Any) -> bool:
    if not (isinstance(left, str) and isinstance(right, str)):
        raise _mismatch("matches", left, right)
    return compile_regex(right).search(left) is not None


def make_range(low: Any, high: Any) -> list[int]:
    if not (type(low) is int and type(high) is int):
        raise _mismatch("..", low, high)
    if high - low + 1 > RANGE_LIMIT:
        raise EvalProblem(f"range {low}..{high} is longer than {RANGE_LIMIT} elements")
    return list(range(low, high + 1))


def negate(value: Any) -> Any:
    if type(value) is int:
        return checked_int(-value)
    if type(value) is float:
        return -value
    raise EvalProblem(f"invalid operation: -{type_name(value)} (-{describe_value(value)})")


BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "+": _add,
    "-": _subtract,
    "*": _multiply,
    "/": _divide,
    "%": _modulo,
    "**": exponent,
    "^": exponent,
    "==": strict_equal,
    "!=": lambda left, right: not strict_equal(left, right),
    "<": _compare("<", lambda a, b: bool(a < b)),
    "<=": _compare("<=", lambda a, b: bool(a <= b)),
    ">": _compare(">", lambda a, b: bool(a > b)),
    ">=": _compare(">=", lambda a, b: bool(a >= b)),
    "in": _contains_item,
    "contains": _strings("contains", lambda a, b: b in a),
    "startsWith": _strings("startsWith", str.startswith),
    "endsWith": _strings("endsWith", str.endswith),
    "matches": _matches,
    "..": make_range,
}
"""Operators that always evaluate both sides; `&&`, `||`, `??` and `?:` short-circuit."""
