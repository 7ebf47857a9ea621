"""What a builtin function is, and the argument checks every builtin shares."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from headway.expr.errors import EvalProblem
from headway.expr.values import describe_value, is_list, is_map, is_number, type_name

__all__ = [
    "Builtin",
    "invalid_argument",
    "need_int",
    "need_list",
    "need_map",
    "need_number",
    "need_string",
]


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


def invalid_argument(name: str, value: Any) -> EvalProblem:
    return EvalProblem(f"invalid argument for {name}: {type_name(value)} {describe_value(value)}")


def need_number(name: str, value: Any) -> int | float:
    if not is_number(value):
        raise invalid_argument(name, value)
    number: int | float = value
    return number


def need_int(name: str, value: Any) -> int:
    if type(value) is not int:
        raise invalid_argument(name, value)
    return value


def need_string(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise invalid_argument(name, value)
    return value


def need_list(name: str, value: Any) -> Sequence[Any]:
    if not is_list(value):
        raise invalid_argument(name, value)
    items: Sequence[Any] = value
    return items


def need_map(name: str, value: Any) -> Mapping[Any, Any]:
    if not is_map(value):
        raise invalid_argument(name, value)
    mapping: Mapping[Any, Any] = value
    return mapping
