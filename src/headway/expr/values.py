"""Plain-Python values as the condition language sees them.

Values are what JSON gives: None, bool, int, float, str, list, dict. These helpers give them
expr-lang's meaning: booleans are not numbers, ints stay within 64 bits, equality between an int
and a float is numeric, and `string()` prints the way Go's `%v` does.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from headway.expr.errors import EvalProblem

__all__ = [
    "INT64_MAX",
    "INT64_MIN",
    "Duration",
    "checked_int",
    "describe_value",
    "go_format",
    "is_list",
    "is_map",
    "is_number",
    "strict_equal",
    "to_index",
    "type_name",
    "values_equal",
]

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)


@dataclass(frozen=True, order=True)
class Duration:
    """A Go time.Duration, what `duration("1m30s")` gives: whole nanoseconds."""

    nanoseconds: int

    def __str__(self) -> str:
        """Go's Duration.String(): `1h30m0s`, `1.5s`, `300ms`, `0s`."""
        size = abs(self.nanoseconds)
        sign = "-" if self.nanoseconds < 0 else ""
        if size == 0:
            return "0s"
        if size < 1_000:
            return f"{sign}{size}ns"
        if size < 1_000_000:
            return f"{sign}{_decimal(size, 1_000)}µs"
        if size < 1_000_000_000:
            return f"{sign}{_decimal(size, 1_000_000)}ms"
        hours, rest = divmod(size, 3_600_000_000_000)
        minutes, rest = divmod(rest, 60_000_000_000)
        text = (f"{hours}h" if hours else "") + (f"{minutes}m" if hours or minutes else "")
        return f"{sign}{text}{_decimal(rest, 1_000_000_000)}s"


def _decimal(amount: int, unit: int) -> str:
    whole, fraction = divmod(amount, unit)
    digits = str(fraction).rjust(len(str(unit)) - 1, "0").rstrip("0")
    return f"{whole}.{digits}" if digits else str(whole)


def is_number(value: Any) -> bool:
    """An int or a float; `True` is a bool here, as in Go, never the number 1."""
    kind = type(value)
    return kind is int or kind is float


def is_list(value: Any) -> bool:
    return isinstance(value, list | tuple)


def is_map(value: Any) -> bool:
    return isinstance(value, Mapping)


def type_name(value: Any) -> str:
    """The expr-lang name of a value's type, for error messages."""
    if value is None:
        return "nil"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    if is_list(value):
        return "array"
    if is_map(value):
        return "map"
    if isinstance(value, Duration):
        return "duration"
    return type(value).__name__


def checked_int(value: int) -> int:
    """Keep integer arithmetic inside int64, where Go would silently wrap around."""
    if not INT64_MIN <= value <= INT64_MAX:
        raise EvalProblem("integer overflow (the result does not fit in 64 bits)")
    return value


def to_index(value: Any, what: str) -> int:
    """An index or slice bound: an int, or a float truncated toward zero as Go's int() does."""
    if type(value) is int:
        return value
    if type(value) is float and math.isfinite(value):
        return int(value)
    raise EvalProblem(f"{what} must be a number, not {type_name(value)} {describe_value(value)}")


def values_equal(left: Any, right: Any) -> bool:
    """`==` as expr-lang defines it: numeric across int and float, element-wise for arrays."""
    if is_number(left) and is_number(right):
        return bool(left == right)
    if is_list(left) and is_list(right):
        return len(left) == len(right) and all(map(values_equal, left, right))
    if is_map(left) and is_map(right):
        return left.keys() == right.keys() and all(values_equal(left[k], right[k]) for k in left)
    if type(left) is not type(right):
        return False
    return bool(left == right)


def strict_equal(left: Any, right: Any) -> bool:
    """`==` and `!=`: values of two different types (a number and a string, a bool and a
    number...) are an error, as expr-lang's type checker makes them; nil compares with all."""
    if left is not None and right is not None and _comparison_type(left) != _comparison_type(right):
        raise EvalProblem(
            f"invalid operation: mismatched types {type_name(left)} and {type_name(right)} "
            f"({describe_value(left)} and {describe_value(right)})"
        )
    return values_equal(left, right)


def _comparison_type(value: Any) -> str:
    name = type_name(value)
    return "number" if name in ("int", "float") else name


def describe_value(value: Any, limit: int = 200) -> str:
    """A short JSON rendering for messages: `[0.31]`, `"abc"`, `null` shown as `nil`."""
    if value is None:
        return "nil"
    if isinstance(value, Duration):
        return str(value)
    try:
        text = json.dumps(value, separators=(", ", ": "), default=str)
    except (ValueError, TypeError, RecursionError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def go_format(value: Any) -> str:
    """What Go's `fmt.Sprintf("%v", value)` prints, which is what expr-lang's `string()` gives."""
    return "".join(_go_parts(value))


def _go_parts(value: Any) -> Iterator[str]:
    if value is None:
        yield "<nil>"
    elif isinstance(value, bool):
        yield "true" if value else "false"
    elif isinstance(value, float):
        yield _go_float(value)
    elif isinstance(value, int | str):
        yield str(value)
    elif is_list(value):
        yield from _go_sequence(value)
    elif is_map(value):
        yield "map["
        for position, key in enumerate(sorted(value, key=str)):
            yield " " if position else ""
            yield from _go_parts(key)
            yield ":"
            yield from _go_parts(value[key])
        yield "]"
    else:
        yield str(value)


def _go_sequence(items: Sequence[Any]) -> Iterator[str]:
    yield "["
    for position, item in enumerate(items):
        yield " " if position else ""
        yield from _go_parts(item)
    yield "]"


def _go_float(value: float) -> str:
    """Go's shortest `%g` (what `%v` uses): exponent form below 1e-4 and from 1e6 up."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    sign, digits, exponent = Decimal(repr(value)).normalize().as_tuple()
    assert isinstance(exponent, int)
    mantissa = "".join(map(str, digits))
    point = len(mantissa) + exponent  # position of the decimal point within the digits
    prefix = "-" if sign else ""
    if point - 1 < -4 or point - 1 >= 6:
        tail = f".{mantissa[1:]}" if len(mantissa) > 1 else ""
        power = point - 1
        return f"{prefix}{mantissa[0]}{tail}e{'-' if power < 0 else '+'}{abs(power):02d}"
    if point <= 0:
        return f"{prefix}0.{'0' * -point}{mantissa}"
    if point >= len(mantissa):
        return f"{prefix}{mantissa}{'0' * (point - len(mantissa))}"
    return f"{prefix}{mantissa[:point]}.{mantissa[point:]}"
