"""Plain functions a condition may call: expr-lang's builtins and Argo Rollouts' helpers.

Argo Rollouts adds `asInt`, `asFloat`, `isNaN`, `isInf`, `isNil` and `default` to expr-lang's
own builtins. Headway's `isNil(x)` and `default(x, fallback)` look at their argument; Argo's
ignore it and test the whole `result` (the same thing for the documented `default(result, 0)`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from headway.expr.errors import EvalProblem
from headway.expr.values import (
    INT64_MAX,
    INT64_MIN,
    describe_value,
    go_format,
    is_list,
    is_map,
    is_number,
    type_name,
)

__all__ = ["FUNCTIONS", "Builtin"]

_GO_INT = re.compile(r"[+-]?[0-9]+")
_GO_FLOAT = re.compile(
    r"[+-]?(([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?|inf|infinity|nan)", re.IGNORECASE
)


@dataclass(frozen=True)
class Builtin:
    """A function: its name, how many arguments it takes, and what it does."""

    name: str
    min_args: int
    max_args: int
    call: Callable[[list[Any]], Any]

    def arity(self) -> str:
        if self.min_args == self.max_args:
            return f"{self.min_args} argument{'s' if self.min_args != 1 else ''}"
        if self.max_args > 99:
            return f"at least {self.min_args} argument{'s' if self.min_args != 1 else ''}"
        return f"{self.min_args} to {self.max_args} arguments"


def _invalid(name: str, value: Any) -> EvalProblem:
    return EvalProblem(f"invalid argument for {name}: {type_name(value)} {describe_value(value)}")


def _number(name: str, value: Any) -> int | float:
    if not is_number(value):
        raise _invalid(name, value)
    number: int | float = value
    return number


def _string(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise _invalid(name, value)
    return value


def _parse_int(name: str, text: str) -> int:
    if not _GO_INT.fullmatch(text) or not INT64_MIN <= int(text) <= INT64_MAX:
        raise EvalProblem(f"{name}: {text!r} is not an integer")
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
    raise _invalid(name, value)


def _to_float(name: str, value: Any) -> float:
    if isinstance(value, str):
        return _parse_float(name, value)
    return float(_number(name, value))


def _flatten_numbers(name: str, values: list[Any], depth: int = 0) -> Iterator[int | float]:
    if depth > 32:
        raise EvalProblem(f"{name}: arrays nest too deeply")
    for value in values:
        if is_list(value):
            yield from _flatten_numbers(name, list(value), depth + 1)
        else:
            yield _number(name, value)


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
    raise _invalid("len", value)


def _abs(args: list[Any]) -> int | float:
    return abs(_number("abs", args[0]))


def _round_half_away(value: float) -> float:
    return math.copysign(math.floor(abs(value) + 0.5), value)


def _rounding(name: str, rule: Callable[[float], float | int]) -> Builtin:
    def call(args: list[Any]) -> float:
        number = float(_number(name, args[0]))
        return float(rule(number)) if math.isfinite(number) else number

    return Builtin(name, 1, 1, call)


def _edge(name: str, position: int) -> Builtin:
    def call(args: list[Any]) -> Any:
        value = args[0]
        if value is None or (is_list(value) and not value):
            return None
        if is_list(value):
            return value[position]
        raise _invalid(name, value)

    return Builtin(name, 1, 1, call)


def _trim(args: list[Any]) -> str:
    text = _string("trim", args[0])
    if len(args) == 1:
        return text.strip()
    return text.strip(_string("trim", args[1]))


def _trim_prefix(args: list[Any]) -> str:
    affix = _string("trimPrefix", args[1]) if len(args) == 2 else " "
    return _string("trimPrefix", args[0]).removeprefix(affix)


def _trim_suffix(args: list[Any]) -> str:
    affix = _string("trimSuffix", args[1]) if len(args) == 2 else " "
    return _string("trimSuffix", args[0]).removesuffix(affix)


def _float_test(name: str, test: Callable[[float], bool]) -> Builtin:
    def call(args: list[Any]) -> bool:
        return test(float(_number(name, args[0])))

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
    Builtin("lower", 1, 1, lambda args: _string("lower", args[0]).lower()),
    Builtin("upper", 1, 1, lambda args: _string("upper", args[0]).upper()),
    Builtin("trim", 1, 2, _trim),
    Builtin("trimPrefix", 1, 2, _trim_prefix),
    Builtin("trimSuffix", 1, 2, _trim_suffix),
    _edge("first", 0),
    _edge("last", -1),
    Builtin("asInt", 1, 1, lambda args: _to_int("asInt", args[0])),
    Builtin("asFloat", 1, 1, lambda args: _to_float("asFloat", args[0])),
    _float_test("isNaN", math.isnan),
    _float_test("isInf", math.isinf),
    Builtin("isNil", 1, 1, lambda args: args[0] is None),
    Builtin("default", 2, 2, _default),
]

FUNCTIONS: dict[str, Builtin] = {builtin.name: builtin for builtin in _TABLE}
