"""`toJSON` and `fromJSON` as expr-lang does them with Go's encoding/json.

Go indents with two spaces, sorts map keys, writes a float without a fraction as an integer
(`1`, not `1.0`), escapes `<`, `>` and `&`, and refuses NaN and infinities. Decoding gives Go's
`any`: every number is a float.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

from headway.expr.errors import EvalProblem
from headway.expr.values import Duration, is_list, is_map, type_name

__all__ = ["from_json", "to_json"]

_HTML_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028"}
_MAX_DEPTH = 100


def to_json(value: Any) -> str:
    return "".join(_encode(value, 0))


def _string(text: str) -> str:
    quoted = json.dumps(text, ensure_ascii=False)
    for char, escape in _HTML_ESCAPES.items():
        quoted = quoted.replace(char, escape)
    return quoted.replace("\u2029", "\\u2029")


def _number(value: int | float) -> str:
    if type(value) is int:
        return str(value)
    if not math.isfinite(value):
        raise EvalProblem(f"json: unsupported value: {value}")
    magnitude = abs(value)
    if value == int(value) and magnitude < 1e21:
        return str(int(value))
    if magnitude < 1e-6 or magnitude >= 1e21:
        mantissa, _, exponent = repr(value).partition("e")
        power = int(exponent)
        return f"{mantissa}e{'-' if power < 0 else '+'}{abs(power)}"
    return format(Decimal(repr(value)), "f")


def _encode(value: Any, depth: int) -> Iterator[str]:
    if depth > _MAX_DEPTH:
        raise EvalProblem("json: the value nests too deeply")
    if value is None or isinstance(value, bool):
        yield "null" if value is None else ("true" if value else "false")
    elif isinstance(value, int | float):
        yield _number(value)
    elif isinstance(value, str):
        yield _string(value)
    elif isinstance(value, Duration):
        yield str(value.nanoseconds)
    elif is_list(value):
        yield from _container("[]", [(None, item) for item in value], depth)
    elif is_map(value):
        keys = sorted(value, key=str)
        yield from _container("{}", [(k, value[k]) for k in keys], depth)
    else:  # pragma: no cover - condition values are JSON values
        raise EvalProblem(f"json: unsupported type {type_name(value)}")


def _container(brackets: str, items: list[tuple[Any, Any]], depth: int) -> Iterator[str]:
    """An array or object, indented two spaces per level as Go's MarshalIndent does."""
    if not items:
        yield brackets
        return
    yield brackets[0] + "\n"
    for position, (key, item) in enumerate(items):
        yield "  " * (depth + 1)
        if brackets == "{}":
            yield _string(str(key)) + ": "
        yield from _encode(item, depth + 1)
        yield ",\n" if position < len(items) - 1 else "\n"
    yield "  " * depth + brackets[1]


def from_json(text: str) -> Any:
    try:
        return json.loads(
            text, parse_int=_finite, parse_float=_finite, parse_constant=_refuse_constant
        )
    except (ValueError, RecursionError) as err:
        raise EvalProblem(f"fromJSON: not valid JSON: {err}") from None


def _finite(number: str) -> float:
    value = float(number)
    if math.isinf(value):
        raise ValueError(f"cannot unmarshal number {number} into a float (out of range)")
    return value


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"invalid character {name[0]!r} looking for beginning of value")
