"""Compiled sub-expressions: each node is a closure plus the source text it stands for.

Compiling to closures once makes evaluation a chain of plain Python calls, with no tree walk
and no dispatch on node types. The text is kept so every runtime error can name the
sub-expression it happened in.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from headway.expr.errors import EvalProblem, EvaluationError

__all__ = [
    "MAX_DEPTH",
    "STEP_BUDGET",
    "Bound",
    "Budget",
    "Frame",
    "NilChain",
    "Node",
    "guarded",
]

MAX_DEPTH = 100
"""How deeply a condition may nest; deeper input is refused when it is compiled."""

STEP_BUDGET = 1_000_000
"""Elements one evaluation may build or visit (ranges, predicates), so nested loops such as
`map(1..100000, {map(1..100000, #)})` stop with an error instead of running for hours."""


class Budget:
    """Work left for one evaluation, shared by every frame of it."""

    __slots__ = ("left",)

    def __init__(self, steps: int = STEP_BUDGET) -> None:
        self.left = steps

    def spend(self, steps: int) -> None:
        self.left -= steps
        if self.left < 0:
            raise EvalProblem(f"the condition does too much work (over {STEP_BUDGET} steps)")


@dataclass(frozen=True, slots=True)
class Bound:
    """A `let` name's value. Reading it is charged to the budget by the value's full size,
    because `let` lets one value appear many times: without the charge,
    `let a = 1..1000; let b = [a, a, a]; let c = [b, b, b]; ...` builds, compares or prints
    exponentially large values in a few characters."""

    value: Any

    def read(self, budget: Budget) -> Any:
        budget.spend(_size(self.value, budget.left + 1))
        return self.value


def _size(value: Any, limit: int) -> int:
    """Elements in `value`, nested ones included (strings count one per 64 characters);
    counting stops past `limit`, so sizing a huge shared structure is cheap."""
    total, stack = 0, [value]
    while stack and total <= limit:
        item = stack.pop()
        total += 1
        if isinstance(item, str):
            total += len(item) // 64
        elif isinstance(item, list | tuple):
            stack.extend(item)
        elif isinstance(item, Mapping):
            stack.extend(item.values())
    return total


@dataclass(frozen=True, slots=True)
class Frame:
    """What a node can see: the environment (with `let` names) and, inside a predicate, the
    current element, its index and, in `reduce`, the accumulator."""

    env: Mapping[str, Any]
    budget: Budget
    element: Any = None
    index: int = 0
    accumulator: Any = None


Run = Callable[[Frame], Any]


@dataclass(frozen=True, slots=True)
class Node:
    """One compiled sub-expression.

    `uses_pointer` marks a `#` or `.field` not yet enclosed by a predicate, which is an error
    at the top level. `constant` holds the value of a literal, for compile-time checks such as
    a `matches` pattern.
    """

    run: Run
    text: str
    depth: int
    uses_pointer: bool = False
    is_constant: bool = False
    constant: Any = None


class NilChain(Exception):
    """An optional link (`?.`) met nil: the whole member chain evaluates to nil."""


def guarded(text: str, body: Callable[[Frame], Any]) -> Run:
    """Wrap `body` so a helper's `EvalProblem` becomes an error naming `text`."""

    def run(frame: Frame) -> Any:
        try:
            return body(frame)
        except EvalProblem as problem:
            raise EvaluationError(f"{text}: {problem}") from None

    return run
