"""Member access, indexing, slicing and optional chaining (`a.b`, `a?.b`, `a[0]`, `a[1:3]`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from headway.expr.errors import EvalProblem
from headway.expr.nodes import Frame, NilChain, Node, guarded
from headway.expr.values import describe_value, is_list, is_map, to_index, type_name

__all__ = ["PostfixStep", "apply_postfix", "fetch", "slice_of"]


def fetch(container: Any, key: Any) -> Any:
    """`container[key]`: negative indexes count from the end; a missing map key is nil."""
    if is_map(container):
        if not isinstance(key, str) and not _has_typed_keys(container, key):
            raise EvalProblem(f"a map key must be a string, not {type_name(key)}")
        return container.get(key)
    if (is_list(container) or isinstance(container, str)) and not isinstance(key, str):
        index = to_index(key, "an index")
        length = len(container)
        position = index + length if index < 0 else index
        if not 0 <= position < length:
            raise EvalProblem(f"index {index} out of range (array length is {length})")
        return container[position]
    raise EvalProblem(
        f"cannot fetch {describe_value(key)} from {type_name(container)}"
        + ("" if container is None else f" {describe_value(container)}")
    )


def _has_typed_keys(container: Any, key: Any) -> bool:
    """A map built by `groupBy` may have bool or number keys; a JSON object never does."""
    if not isinstance(key, bool | int | float) and key is not None:
        return False
    return any(not isinstance(existing, str) for existing in container)


def slice_of(container: Any, low: Any, high: Any) -> Any:
    """`container[low:high]` with Go's clamping: bounds never raise, they shrink."""
    if not (is_list(container) or isinstance(container, str)):
        raise EvalProblem(f"cannot slice {type_name(container)} {describe_value(container)}")
    length = len(container)
    start = 0 if low is None else to_index(low, "a slice bound")
    end = length if high is None else to_index(high, "a slice bound")
    start = max(start + length if start < 0 else start, 0)
    end = min(max(end + length if end < 0 else end, 0), length)
    start = min(start, end)
    return container[start:end]


@dataclass(frozen=True)
class PostfixStep:
    """One link of a member chain: `.name`, `?.name`, `[expr]`, `?.[expr]` or `[lo:hi]`."""

    kind: str  # "member", "index" or "slice"
    optional: bool = False
    key: Node | None = None
    low: Node | None = None
    high: Node | None = None

    def text(self) -> str:
        lead = "?." if self.optional else ""
        if self.kind == "member":
            return f"{lead or '.'}{self.key.constant if self.key else ''}"
        if self.kind == "index":
            return f"{lead}[{self.key.text if self.key else ''}]"
        low = self.low.text if self.low else ""
        high = self.high.text if self.high else ""
        return f"[{low}:{high}]"


def _step_node(base: Node, step: PostfixStep) -> Node:
    text = base.text + step.text()
    base_run = base.run
    parts = [n for n in (step.key, step.low, step.high) if n is not None]
    if step.kind == "slice":
        low_run = step.low.run if step.low else None
        high_run = step.high.run if step.high else None

        def run_slice(frame: Frame) -> Any:
            container = base_run(frame)
            low = low_run(frame) if low_run else None
            high = high_run(frame) if high_run else None
            return slice_of(container, low, high)

        body = run_slice
    else:
        assert step.key is not None
        key_run, optional = step.key.run, step.optional

        def run_fetch(frame: Frame) -> Any:
            container = base_run(frame)
            if container is None and optional:
                raise NilChain
            return fetch(container, key_run(frame))

        body = run_fetch
    return Node(
        guarded(text, body),
        text,
        1 + max(n.depth for n in [base, *parts]),
        uses_pointer=base.uses_pointer or any(n.uses_pointer for n in parts),
    )


def apply_postfix(base: Node, steps: list[PostfixStep]) -> Node:
    """Build the chain; if any link is optional, a nil there makes the whole chain nil."""
    node = base
    for step in steps:
        node = _step_node(node, step)
    if not any(step.optional for step in steps):
        return node
    inner = node.run

    def run_chain(frame: Frame) -> Any:
        try:
            return inner(frame)
        except NilChain:
            return None

    return Node(run_chain, node.text, node.depth, node.uses_pointer)
