"""Turns the grammar's reductions into compiled nodes, while lark parses (no parse tree).

Lark calls one method per rule as it reduces, bottom-up and without recursion. Each method
returns a `Node` (see nodes.py), or a small value (an operator string, a token, a list) that
its parent rule consumes. Problems found here (an unknown function, an invalid literal, too
deep nesting) raise `CompileProblem`, which program.py turns into a ConditionSyntaxError.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from lark import Token, Transformer

from headway.expr import operators
from headway.expr.access import PostfixStep, apply_postfix, fetch
from headway.expr.builtins import FUNCTIONS
from headway.expr.calls import PREDICATE_OPTIONAL, function_node, predicate_node, reduce_node
from headway.expr.errors import EvalProblem
from headway.expr.literals import LiteralError, parse_float, parse_int, unescape
from headway.expr.nodes import MAX_DEPTH, Bound, Frame, Node, guarded
from headway.expr.values import describe_value, type_name

__all__ = ["Builder", "CompileProblem"]

_RELATIONAL = frozenset({"<", "<=", ">", ">="})


class CompileProblem(Exception):
    """A problem found while building, at a 1-based line and column when known."""

    def __init__(self, problem: str, token: Token | None = None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.line = (token.line or 1) if token is not None else 1
        self.column = (token.column or 1) if token is not None else 1


def _make(run: Any, text: str, *children: Node, uses_pointer: bool | None = None) -> Node:
    depth = 1 + max((child.depth for child in children), default=0)
    if depth > MAX_DEPTH:
        raise CompileProblem(f"the condition nests deeper than {MAX_DEPTH} levels")
    if uses_pointer is None:
        uses_pointer = any(child.uses_pointer for child in children)
    return Node(run, text, depth, uses_pointer)


def _constant(value: Any, text: str) -> Node:
    return Node(lambda _frame: value, text, 1, is_constant=True, constant=value)


def _require_bool(op: str, side: Node, value: Any) -> bool:
    if type(value) is not bool:
        raise EvalProblem(
            f"{op} needs a bool, but {side.text} is {type_name(value)} {describe_value(value)}"
        )
    return value


def binary_node(op: str, left: Node, right: Node) -> Node:
    """A strict binary operator; `not in`, `not matches` and friends negate the base one."""
    negated = op.startswith("not ")
    apply = operators.BINARY[op.removeprefix("not ")]
    left_run, right_run = left.run, right.run
    text = f"{left.text} {op} {right.text}"
    if op.endswith("matches") and right.is_constant and isinstance(right.constant, str):
        try:
            operators.compile_regex(right.constant)  # a bad literal pattern fails at compile time
        except EvalProblem as problem:
            raise CompileProblem(str(problem)) from None

    def body(frame: Frame) -> Any:
        value = apply(left_run(frame), right_run(frame))
        if op == "..":
            frame.budget.spend(len(value))
        return (not value) if negated else value

    return _make(guarded(text, body), text, left, right)


def logical_node(op: str, left: Node, right: Node) -> Node:
    """`&&`/`and` and `||`/`or`: both sides must be bools; the right one is skipped if it can be."""
    is_and = op in ("&&", "and")
    left_run, right_run = left.run, right.run
    text = f"{left.text} {op} {right.text}"

    def body(frame: Frame) -> bool:
        first = _require_bool(op, left, left_run(frame))
        if first is not is_and:
            return first
        return _require_bool(op, right, right_run(frame))

    return _make(guarded(text, body), text, left, right)


def _fold(children: list[Any], combine: Any) -> Node:
    node: Node = children[0]
    for position in range(1, len(children), 2):
        node = combine(str(children[position]), node, children[position + 1])
    return node


class Builder(Transformer[Token, Node]):
    """Lark callbacks, one per rule of conditions.lark; stateless, so one serves all threads."""

    # Literals -------------------------------------------------------------------------
    def int_lit(self, children: list[Token]) -> Node:
        return _constant(self._literal(parse_int, children[0]), str(children[0]))

    def float_lit(self, children: list[Token]) -> Node:
        return _constant(self._literal(parse_float, children[0]), str(children[0]))

    def string_lit(self, children: list[Token]) -> Node:
        token = children[0]
        return _constant(self._literal(lambda t: unescape(t[1:-1]), token), str(token))

    def raw_string_lit(self, children: list[Token]) -> Node:
        return _constant(str(children[0])[1:-1], str(children[0]))

    def key_name(self, children: list[Token]) -> Node:
        return _constant(str(children[0]), str(children[0]))

    def true_lit(self, _children: list[Token]) -> Node:
        return _constant(True, "true")

    def false_lit(self, _children: list[Token]) -> Node:
        return _constant(False, "false")

    def nil_lit(self, _children: list[Token]) -> Node:
        return _constant(None, "nil")

    @staticmethod
    def _literal(parse: Any, token: Token) -> Any:
        try:
            return parse(str(token))
        except LiteralError as err:
            raise CompileProblem(str(err), token) from None

    # Names, calls, collections --------------------------------------------------------
    def variable(self, children: list[Token]) -> Node:
        name = str(children[0])

        def run(frame: Frame) -> Any:
            try:
                value = frame.env[name]
            except KeyError:
                known = ", ".join(sorted(map(str, frame.env))) or "none"
                raise EvalProblem(f"unknown name {name} (known names: {known})") from None
            return value.read(frame.budget) if isinstance(value, Bound) else value

        return Node(guarded(name, run), name, 1)

    def call(self, children: list[Any]) -> Node:
        name_token, args = children[0], children[1] or []
        name = str(name_token)
        builtin = FUNCTIONS.get(name)
        if builtin is None:
            known = ", ".join(sorted(FUNCTIONS))
            raise CompileProblem(f"unknown function {name}() (functions: {known})", name_token)
        if not builtin.min_args <= len(args) <= builtin.max_args:
            raise CompileProblem(
                f"{name}() takes {builtin.arity()}, but was given {len(args)}", name_token
            )
        node = function_node(name, args)
        return _make(node.run, node.text, *args)

    def pred_call(self, children: list[Any]) -> Node:
        name_token, items, predicate = children
        name = str(name_token)
        if predicate is None and name not in PREDICATE_OPTIONAL:
            raise CompileProblem(
                f"{name}() needs a predicate, like {name}(result, {{# > 0}})", name_token
            )
        node = predicate_node(name, items, predicate)
        parts = [items] + ([predicate] if predicate else [])
        return _make(node.run, node.text, *parts, uses_pointer=items.uses_pointer)

    def reduce_call(self, children: list[Any]) -> Node:
        _keyword, items, step, initial = children
        node = reduce_node(items, step, initial)
        parts = [items, step] + ([initial] if initial is not None else [])
        return _make(node.run, node.text, *parts, uses_pointer=node.uses_pointer)

    def predicate(self, children: list[Node]) -> Node:
        return children[0]

    def args(self, children: list[Node]) -> list[Node]:
        return [child for child in children if isinstance(child, Node)]

    def paren(self, children: list[Node]) -> Node:
        inner = children[0]
        return Node(
            inner.run,
            f"({inner.text})",
            inner.depth,
            inner.uses_pointer,
            inner.is_constant,
            inner.constant,
        )

    def array(self, children: list[Any]) -> Node:
        items: list[Node] = children[0] or []
        runs = [item.run for item in items]
        text = f"[{', '.join(item.text for item in items)}]"
        return _make(lambda frame: [run(frame) for run in runs], text, *items)

    def pairs(self, children: list[Any]) -> list[tuple[Node, Node]]:
        return [child for child in children if isinstance(child, tuple)]

    def pair(self, children: list[Node]) -> tuple[Node, Node]:
        return children[0], children[1]

    def map(self, children: list[Any]) -> Node:
        pairs: list[tuple[Node, Node]] = children[0] or []
        runs = [(key.run, value.run) for key, value in pairs]
        text = "{" + ", ".join(f"{key.text}: {value.text}" for key, value in pairs) + "}"

        def body(frame: Frame) -> dict[Any, Any]:
            out: dict[Any, Any] = {}
            for key_run, value_run in runs:
                key = key_run(frame)
                if not isinstance(key, str | int | float | bool) and key is not None:
                    raise EvalProblem(f"a map key cannot be {type_name(key)}")
                out[key] = value_run(frame)
            return out

        return _make(guarded(text, body), text, *(n for pair in pairs for n in pair))

    # Predicate pointers -----------------------------------------------------------------
    def pointer(self, children: list[Token]) -> Node:
        name = str(children[1]) if len(children) > 1 else ""
        if name not in ("", "index", "acc"):
            raise CompileProblem(f"unknown pointer #{name} (use #, #index or #acc)", children[1])
        if name == "index":
            return Node(lambda frame: frame.index, "#index", 1, uses_pointer=True)
        if name == "acc":
            return Node(lambda frame: frame.accumulator, "#acc", 1, uses_pointer=True)
        return Node(lambda frame: frame.element, "#", 1, uses_pointer=True)

    def pointer_field(self, children: list[Token]) -> Node:
        name = str(children[0])
        text = f".{name}"
        return Node(guarded(text, lambda frame: fetch(frame.element, name)), text, 1, True)

    # Postfix chains ---------------------------------------------------------------------
    def postfix(self, children: list[Any]) -> Node:
        base: Node = children[0]
        steps: list[PostfixStep] = children[1:]
        node = apply_postfix(base, steps)
        return _make(
            node.run,
            node.text,
            base,
            *(part for step in steps for part in (step.key, step.low, step.high) if part),
        )

    def member(self, children: list[Token]) -> PostfixStep:
        return PostfixStep("member", key=_constant(str(children[0]), str(children[0])))

    def opt_member(self, children: list[Token]) -> PostfixStep:
        return PostfixStep("member", True, key=_constant(str(children[1]), str(children[1])))

    def index(self, children: list[Node]) -> PostfixStep:
        return PostfixStep("index", key=children[0])

    def opt_index(self, children: list[Any]) -> PostfixStep:
        return PostfixStep("index", True, key=children[1])

    def slice(self, children: list[Any]) -> PostfixStep:
        return PostfixStep("slice", low=children[0], high=children[2])

    # Operators, highest precedence first ----------------------------------------------
    def coalesce(self, children: list[Node]) -> Node:
        def combine(_op: str, left: Node, right: Node) -> Node:
            left_run, right_run = left.run, right.run
            text = f"{left.text} ?? {right.text}"

            def run(frame: Frame) -> Any:
                value = left_run(frame)
                return right_run(frame) if value is None else value

            return _make(run, text, left, right)

        node = children[0]
        for right in children[1:]:
            node = combine("??", node, right)
        return node

    def power(self, children: list[Any]) -> Node:
        return binary_node(str(children[1]), children[0], children[2])

    def not_op(self, children: list[Any]) -> Node:
        op, operand = str(children[0]), children[1]
        text = f"{op}{' ' if op == 'not' else ''}{operand.text}"
        operand_run = operand.run
        return _make(
            guarded(text, lambda frame: not _require_bool(op, operand, operand_run(frame))),
            text,
            operand,
        )

    def negate(self, children: list[Any]) -> Node:
        operand: Node = children[1]
        operand_run = operand.run
        text = f"-{operand.text}"
        return _make(guarded(text, lambda f: operators.negate(operand_run(f))), text, operand)

    def plus(self, children: list[Any]) -> Node:
        operand: Node = children[1]
        operand_run = operand.run
        text = f"+{operand.text}"

        def run(frame: Frame) -> Any:
            return operators.negate(operators.negate(operand_run(frame)))

        return _make(guarded(text, run), text, operand)

    def mul_expr(self, children: list[Any]) -> Node:
        return _fold(children, binary_node)

    def add_expr(self, children: list[Any]) -> Node:
        return _fold(children, binary_node)

    def range(self, children: list[Node]) -> Node:
        return binary_node("..", children[0], children[1])

    def cmp_expr(self, children: list[Any]) -> Node:
        """Comparisons fold left; `a < b < c` chains into `a < b && b < c` as in expr-lang."""
        node: Node = children[0]
        previous_op, previous_right = "", children[0]
        for position in range(1, len(children), 2):
            op, right = str(children[position]), children[position + 1]
            if op in _RELATIONAL and previous_op in _RELATIONAL:
                node = logical_node("&&", node, binary_node(op, previous_right, right))
            else:
                node = binary_node(op, node, right)
            previous_op, previous_right = op, right
        return node

    def and_expr(self, children: list[Any]) -> Node:
        return _fold(children, logical_node)

    def or_expr(self, children: list[Any]) -> Node:
        return _fold(children, logical_node)

    def conditional(self, children: list[Node]) -> Node:
        condition, when_true, when_false = children
        cond_run, true_run, false_run = condition.run, when_true.run, when_false.run
        text = f"{condition.text} ? {when_true.text} : {when_false.text}"

        def body(frame: Frame) -> Any:
            chosen = _require_bool("?:", condition, cond_run(frame))
            return true_run(frame) if chosen else false_run(frame)

        return _make(guarded(text, body), text, condition, when_true, when_false)

    def if_expr(self, children: list[Any]) -> Node:
        """`if cond { a } else { b }` (and `else if ...`): the ternary, spelled out."""
        nodes = [child for child in children if isinstance(child, Node)]
        return self.conditional(nodes)

    def let_expr(self, children: list[Any]) -> Node:
        """`let name = value; body`: body sees `name`, which hides a variable of that name."""
        _keyword, name_token, value, body = children
        name, value_run, body_run = str(name_token), value.run, body.run
        text = f"let {name} = {value.text}; {body.text}"

        def run(frame: Frame) -> Any:
            env = {**frame.env, name: Bound(value_run(frame))}
            return body_run(dataclasses.replace(frame, env=env))

        return _make(run, text, value, body)

    def elvis(self, children: list[Node]) -> Node:
        return self.conditional([children[0], children[0], children[1]])

    # Operator tokens to their canonical spelling -----------------------------------------
    def or_op(self, children: list[Token]) -> str:
        return str(children[0])

    def and_op(self, children: list[Token]) -> str:
        return str(children[0])

    def cmp_op(self, children: list[Token]) -> str:
        return " ".join(str(token) for token in children)

    def add_op(self, children: list[Token]) -> str:
        return str(children[0])

    def mul_op(self, children: list[Token]) -> str:
        return str(children[0])

    def pow_op(self, children: list[Token]) -> str:
        return str(children[0])

    def pred_name(self, children: list[Token]) -> Token:
        return children[0]
