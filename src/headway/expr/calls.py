"""Function calls and the predicate builtins (`all(result, {# < 0.5})`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from headway.expr.builtins import FUNCTIONS
from headway.expr.errors import EvalProblem
from headway.expr.nodes import Frame, Node, guarded
from headway.expr.values import checked_int, describe_value, is_list, is_number, type_name

__all__ = ["PREDICATE_OPTIONAL", "function_node", "predicate_node", "reduce_node"]

Test = Callable[[Any, int], Any]
"""Runs the predicate for one element and its index."""

PREDICATE_OPTIONAL = frozenset({"count", "sum"})
"""Predicate builtins whose predicate may be left out."""


def function_node(name: str, args: Sequence[Node]) -> Node:
    """A call of a known builtin; the caller has checked the name and the argument count."""
    builtin = FUNCTIONS[name]
    runs = [arg.run for arg in args]
    text = f"{name}({', '.join(arg.text for arg in args)})"

    def body(frame: Frame) -> Any:
        return builtin.call([run(frame) for run in runs])

    return Node(
        guarded(text, body),
        text,
        1 + max((arg.depth for arg in args), default=0),
        uses_pointer=any(arg.uses_pointer for arg in args),
    )


def _boolean(name: str, value: Any, element: Any) -> bool:
    if type(value) is not bool:
        raise EvalProblem(
            f"the predicate of {name}() must give a bool, but gave {type_name(value)} "
            f"{describe_value(value)} for element {describe_value(element)}"
        )
    return value


def _all(items: Sequence[Any], test: Test) -> bool:
    return all(_boolean("all", test(item, i), item) for i, item in enumerate(items))


def _any(items: Sequence[Any], test: Test) -> bool:
    return any(_boolean("any", test(item, i), item) for i, item in enumerate(items))


def _none(items: Sequence[Any], test: Test) -> bool:
    return not any(_boolean("none", test(item, i), item) for i, item in enumerate(items))


def _one(items: Sequence[Any], test: Test) -> bool:
    return sum(_boolean("one", test(item, i), item) for i, item in enumerate(items)) == 1


def _filter(items: Sequence[Any], test: Test) -> list[Any]:
    return [item for i, item in enumerate(items) if _boolean("filter", test(item, i), item)]


def _map(items: Sequence[Any], test: Test) -> list[Any]:
    return [test(item, i) for i, item in enumerate(items)]


def _count(items: Sequence[Any], test: Test) -> int:
    return sum(_boolean("count", test(item, i), item) for i, item in enumerate(items))


def _sum(items: Sequence[Any], test: Test) -> int | float:
    total: int | float = 0
    for i, item in enumerate(items):
        value = test(item, i)
        if not is_number(value):
            shown = f"{type_name(value)} {describe_value(value)}"
            raise EvalProblem(f"sum() needs numbers, not {shown}")
        total = checked_int(total + value) if type(total) is type(value) is int else total + value
    return total


def _find(reverse: bool, want_index: bool) -> Callable[[Sequence[Any], Test], Any]:
    def find(items: Sequence[Any], test: Test) -> Any:
        order = range(len(items) - 1, -1, -1) if reverse else range(len(items))
        for i in order:
            if _boolean("find", test(items[i], i), items[i]):
                return i if want_index else items[i]
        return -1 if want_index else None

    return find


def _group_by(items: Sequence[Any], test: Test) -> dict[Any, list[Any]]:
    groups: dict[Any, list[Any]] = {}
    for i, item in enumerate(items):
        key = test(item, i)
        if not isinstance(key, str | int | float | bool) and key is not None:
            raise EvalProblem(f"groupBy() cannot group by {type_name(key)} {describe_value(key)}")
        groups.setdefault(key, []).append(item)
    return groups


_PREDICATES: dict[str, Callable[[Sequence[Any], Test], Any]] = {
    "all": _all,
    "any": _any,
    "none": _none,
    "one": _one,
    "filter": _filter,
    "map": _map,
    "count": _count,
    "sum": _sum,
    "find": _find(reverse=False, want_index=False),
    "findIndex": _find(reverse=False, want_index=True),
    "findLast": _find(reverse=True, want_index=False),
    "findLastIndex": _find(reverse=True, want_index=True),
    "groupBy": _group_by,
}


def _array(name: str, values: Any) -> Sequence[Any]:
    if not is_list(values):
        raise EvalProblem(
            f"{name}() needs an array, not {type_name(values)} {describe_value(values)}"
        )
    items: Sequence[Any] = values
    return items


def reduce_node(items: Node, step: Node, initial: Node | None) -> Node:
    """`reduce(items, {#acc + #}, initial)`: without `initial`, the first element starts."""
    items_run, step_run = items.run, step.run
    initial_run = initial.run if initial is not None else None
    text = f"reduce({items.text}, {{{step.text}}}" + (f", {initial.text})" if initial else ")")

    def body(frame: Frame) -> Any:
        values = _array("reduce", items_run(frame))
        frame.budget.spend(len(values))
        start = 0
        if initial_run is not None:
            total = initial_run(frame)
        elif values:
            total, start = values[0], 1
        else:
            raise EvalProblem("reduce of empty array with no initial value")
        for index in range(start, len(values)):
            total = step_run(Frame(frame.env, frame.budget, values[index], index, total))
        return total

    children = [n for n in (items, step, initial) if n is not None]
    return Node(
        guarded(text, body),
        text,
        1 + max(child.depth for child in children),
        uses_pointer=items.uses_pointer or (initial is not None and initial.uses_pointer),
    )


def predicate_node(name: str, items: Node, predicate: Node | None) -> Node:
    """`name(items, {predicate})`: the predicate sees each element as `#` and `.field`."""
    apply = _PREDICATES[name]
    items_run = items.run
    pred_run = predicate.run if predicate is not None else None
    text = f"{name}({items.text}" + (f", {{{predicate.text}}})" if predicate else ")")

    def body(frame: Frame) -> Any:
        values = _array(name, items_run(frame))

        def test(element: Any, index: int) -> Any:
            if pred_run is None:
                return element
            return pred_run(Frame(frame.env, frame.budget, element, index, frame.accumulator))

        frame.budget.spend(len(values))
        return apply(values, test)

    children = [items] + ([predicate] if predicate else [])
    return Node(
        guarded(text, body),
        text,
        1 + max(child.depth for child in children),
        uses_pointer=items.uses_pointer,
    )
