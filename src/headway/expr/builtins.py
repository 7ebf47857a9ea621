"""Plain functions a condition may call: expr-lang's builtins and Argo Rollouts' helpers.

This module holds the numeric ones and conversions, and gathers the rest into `FUNCTIONS`:
strings and JSON (text_functions), arrays and maps (collection_functions), bits and durations
(bits_and_durations). Predicate builtins such as `all` and `reduce` are in calls.py.

Argo Rollouts adds `asInt`, `asFloat`, `isNaN`, `isInf`, `isNil` and `default` to expr-lang's
own builtins. Headway's `isNil(x)` and `default(x, fallback)` look at their argument; Argo's
ignore it and test the whole `result` (the same thing for the documented `default(result, 0)`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from typing import Any

from headway.expr.bits_and_durations import BIT_AND_DURATION_FUNCTIONS
from headway.expr.collection_functions import COLLECTION_FUNCTIONS
from headway.expr.errors import EvalProblem
from headway.expr.signature import Builtin, invalid_argument, need_number
from headway.expr.text_functions import TEXT_FUNCTIONS
from headway.expr.values import (
    INT64_MAX,
    INT64_MIN,
    describe_value,
    go_format,
    is_list,
    is_map,
)

__all__ = ["FUNCTIONS", "Builtin"]

_GO_INT = re.compile(r"[+-]?[0-9]+")
_GO_FLOAT = re.compile(
    r"[+-]?(([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?|inf|infinity|nan)", re.IGNORECASE
)


def _parse_int(name: str, text: str) -> int:
    # More digits than any 64-bit integer has: refused before Python's int() (which gives
    # up past 4,300 digits) is asked.
    too_long = len(text.lstrip("+-").lstrip("0")) > len(str(INT64_MAX))
    if not _GO_INT.fullmatch(text) or too_long or not INT64_MIN <= int(text) <= INT64_MAX:
        shown = text if len(text) <= 40 else f"{text[:40]}... ({len(text)} characters)"
        raise EvalProblem(f"{name}: {shown!r} is not an integer")
    return int(text)


def _parse_float(name: str, text: str) -> float:
    if not _GO_FLOAT.fullmatch(text):
        raise EvalProblem(f"{name}: {text!r} is not a number")
    number = float(text)
    if math.isinf(number) and "inf" not in text.lower():
        raise EvalProblem(f"{name}: {text!r} is out of range for a float")
    return number


def _to_int(name: str, value: Any) -> int:
    """int() and asInt(): floats truncate toward zero, strings parse in base 10."""
    if isinstance(value, str):
        return _parse_int(name, value)
    if type(value) is int:
        return value
    if type(value) is float:
        if not math.isfinite(value) or not INT64_MIN <= value <= INT64_MAX:
            raise EvalProblem(f"{name}: {describe_value(value)} has no integer value")
        return int(value)
    raise invalid_argument(name, value)


def _to_float(name: str, value: Any) -> float:
    if isinstance(value, str):
        return _parse_float(name, value)
    return float(need_number(name, value))


def _flatten_numbers(name: str, values: list[Any], depth: int = 0) -> Iterator[int | float]:
    if depth > 32:
        raise EvalProblem(f"{name}: arrays nest too deeply")
    for value in values:
        if is_list(value):
            yield from _flatten_numbers(name, list(value), depth + 1)
        else:
            yield need_number(name, value)


def _extreme(name: str, pick: Callable[[list[int | float]], int | float]) -> Builtin:
    def call(args: list[Any]) -> Any:
        numbers = list(_flatten_numbers(name, args))
        return pick(numbers) if numbers else None

    return Builtin(name, 1, 1 << 16, call)


def _mean(args: list[Any]) -> float:
    numbers = list(_flatten_numbers("mean", args))
    return float(sum(numbers)) / len(numbers) if numbers else 0.0


def _median(args: list[Any]) -> float:
    numbers = sorted(float(n) for n in _flatten_numbers("median", args))
    if not numbers:
        return 0.0
    middle = len(numbers) // 2
    if len(numbers) % 2:
        return numbers[middle]
    return (numbers[middle - 1] + numbers[middle]) / 2


def _len(args: list[Any]) -> int:
    value = args[0]
    if isinstance(value, str) or is_list(value) or is_map(value):
        return len(value)
    raise invalid_argument("len", value)


def _abs(args: list[Any]) -> int | float:
    return abs(need_number("abs", args[0]))


def _round_half_away(value: float) -> float:
    return math.copysign(math.floor(abs(value) + 0.5), value)


def _rounding(name: str, rule: Callable[[float], float | int]) -> Builtin:
    def call(args: list[Any]) -> float:
        number = float(need_number(name, args[0]))
        return float(rule(number)) if math.isfinite(number) else number

    return Builtin(name, 1, 1, call)


def _edge(name: str, position: int) -> Builtin:
    def call(args: list[Any]) -> Any:
        value = args[0]
        if value is None or (is_list(value) and not value):
            return None
        if is_list(value):
            return value[position]
        raise invalid_argument(name, value)

    return Builtin(name, 1, 1, call)


def _float_test(name: str, test: Callable[[float], bool]) -> Builtin:
    def call(args: list[Any]) -> bool:
        return test(float(need_number(name, args[0])))

    return Builtin(name, 1, 1, call)


def _default(args: list[Any]) -> Any:
    return args[1] if args[0] is None else args[0]


_TABLE = [
    Builtin("len", 1, 1, _len),
    Builtin("abs", 1, 1, _abs),
    _extreme("max", max),
    _extreme("min", min),
    Builtin("mean", 1, 1 << 16, _mean),
    Builtin("median", 1, 1 << 16, _median),
    _rounding("ceil", math.ceil),
    _rounding("floor", math.floor),
    _rounding("round", _round_half_away),
    Builtin("int", 1, 1, lambda args: _to_int("int", args[0])),
    Builtin("float", 1, 1, lambda args: _to_float("float", args[0])),
    Builtin("string", 1, 1, lambda args: go_format(args[0])),
    _edge("first", 0),
    _edge("last", -1),
    Builtin("asInt", 1, 1, lambda args: _to_int("asInt", args[0])),
    Builtin("asFloat", 1, 1, lambda args: _to_float("asFloat", args[0])),
    _float_test("isNaN", math.isnan),
    _float_test("isInf", math.isinf),
    Builtin("isNil", 1, 1, lambda args: args[0] is None),
    Builtin("default", 2, 2, _default),
]

FUNCTIONS: dict[str, Builtin] = {
    builtin.name: builtin
    for builtin in (*_TABLE, *TEXT_FUNCTIONS, *COLLECTION_FUNCTIONS, *BIT_AND_DURATION_FUNCTIONS)
}
