"""Argo Rollouts' condition cases: `utils/evaluate/evaluate_test.go`, read as Go (go_source).

Two kinds of case are read, each in straight-line test code or in a `for _, x := range table`
loop over a literal table:

* `b, err := EvalCondition(RESULT, CONDITION)` with `assert.True/False(t, b)`,
  `assert.Equal(t, WANT, b)` or `assert.Error(t, err)`: expected `true`, `false` or `error`;
  Headway's answer is `headway.expr` evaluating the condition with `result` bound.
* `status, err := EvaluateResult(RESULT, METRIC, ...)` with
  `assert.Equal(t, v1alpha1.AnalysisPhaseX, status)`: expected phase X; Headway's answer is
  `headway.analysis.measurement.measurement_outcome`, the function that gives Argo's phase.

Each test function is one table. A case whose arguments are not literals Headway can read
(a Go struct with methods, a call of a private helper) is counted as not readable.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from headway.analysis.measurement import compile_metric_conditions, measurement_outcome
from headway.conformance.go_source import (
    Cursor,
    Token,
    Unreadable,
    block_end,
    contains_opaque,
    functions,
    parse_value,
    read_tokens,
    resolve,
)
from headway.conformance.tables import Case, TableResult
from headway.expr import ConditionError, compile_condition

__all__ = ["SUITE", "TEST_FILE", "run_condition_tables"]

SUITE = "Argo Rollouts conditions (utils/evaluate)"
TEST_FILE = Path("utils/evaluate/evaluate_test.go")
_CALLS = ("EvalCondition", "EvaluateResult")


def run_condition_tables(argo_rollouts: Path) -> Iterator[TableResult]:
    try:
        tokens = read_tokens(argo_rollouts / TEST_FILE)
    except Unreadable as err:
        yield TableResult(SUITE, str(TEST_FILE), unreadable=(str(err),))
        return
    constants = _constants(tokens)
    for name, body in functions(tokens, prefix="Test"):
        reader = _Reader(dict(constants))
        reader.run(body)
        reader.finish()
        if reader.cases or reader.unreadable:
            yield TableResult(SUITE, name, tuple(reader.cases), tuple(reader.unreadable))


def _constants(tokens: list[Token]) -> dict[str, Any]:
    """Top-level `const name = "literal"` declarations."""
    found: dict[str, Any] = {}
    for index, token in enumerate(tokens[:-3]):
        if token.text == "const" and tokens[index + 2].text == "=":
            try:
                found[tokens[index + 1].text] = parse_value(Cursor(tokens, index + 3), {})
            except Unreadable:
                continue
    return found


@dataclass
class _Pending:
    """A call read, waiting for the asserts after it to say what Argo expects."""

    call: str
    args: list[Any]
    result_var: str
    error_var: str
    expected: str | None = None
    wants_error: bool = False


@dataclass
class _Reader:
    names: dict[str, Any]
    cases: list[Case] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)
    pending: _Pending | None = None

    def run(self, body: list[Token]) -> None:
        cursor = Cursor(body)
        while cursor.position < len(body):
            start = cursor.position
            try:
                self._statement(cursor)
            except (Unreadable, StopIteration, IndexError, ValueError, SyntaxError) as err:
                self._skip_statement(cursor, start, problem=str(err))

    def _skip_statement(self, cursor: Cursor, start: int, *, problem: str) -> None:
        if cursor.position <= start:
            cursor.position = start + 1
        if any(t.text in _CALLS for t in cursor.tokens[start : cursor.position]):
            self.finish()
            self.unreadable.append(problem)

    def _statement(self, cursor: Cursor) -> None:
        head = cursor.peek()
        if head == "for" and cursor.peek(1) == "_" and cursor.peek(5) == "range":
            self._loop(cursor)
        elif head == "assert" and cursor.peek(1) == ".":
            self._assert(cursor)
        elif cursor.peek(1) in (":=", "=") and cursor.peek(2) in _CALLS:
            self._call(cursor, [cursor.take().text])
        elif cursor.peek(1) == "," and cursor.peek(3) in (":=", "="):
            first, _, second, _ = (cursor.take().text for _ in range(4))
            self._call(cursor, [first, second])
        elif cursor.peek(1) == ":=" or (head == "var" and cursor.peek(2) != ","):
            self._binding(cursor)
        else:
            cursor.take()

    def _binding(self, cursor: Cursor) -> None:
        if cursor.peek() == "var":
            cursor.take()
        name = cursor.take().text
        if cursor.peek() not in (":=", "="):
            return  # `var name Type` binds a zero value this reader does not model
        cursor.take()
        self.names.pop(name, None)
        self.names[name] = parse_value(cursor, self.names)

    def _loop(self, cursor: Cursor) -> None:
        cursor.take()  # for
        cursor.expect("_")
        cursor.expect(",")
        variable = cursor.take().text
        cursor.expect(":=")
        cursor.expect("range")
        table = self.names.get(cursor.take().text)
        start = cursor.position
        end = block_end(cursor.tokens, start)
        cursor.position = end
        if not isinstance(table, list):
            raise Unreadable("a loop over a table this reader could not read")
        body = cursor.tokens[start + 1 : end - 1]
        for row in table:
            self.names[variable] = row
            self.run(body)
            self.finish()

    def _call(self, cursor: Cursor, targets: list[str]) -> None:
        if cursor.peek() in (":=", "="):
            cursor.take()
        function = cursor.take().text
        if function not in _CALLS:
            return
        self.finish()
        cursor.expect("(")
        args = [parse_value(cursor, self.names)]
        cursor.expect(",")
        args.append(parse_value(cursor, self.names))
        depth = 1
        while depth:  # the logger and anything else after the first two arguments
            depth += {"(": 1, ")": -1}.get(cursor.take().text, 0)
        self.pending = _Pending(function, args, targets[0], targets[-1])

    def _assert(self, cursor: Cursor) -> None:
        cursor.take()
        cursor.expect(".")
        check = cursor.take().text
        cursor.expect("(")
        cursor.expect("t")
        cursor.expect(",")
        pending = self.pending
        if pending is None:
            return
        if check in ("True", "False") and cursor.peek() == pending.result_var:
            pending.expected = "true" if check == "True" else "false"
        elif check in ("Error", "Errorf", "NotNil", "EqualError") and (
            cursor.peek() == pending.error_var
        ):
            pending.wants_error = True
        elif check == "Equal":
            self._assert_equal(cursor, pending)

    def _assert_equal(self, cursor: Cursor, pending: _Pending) -> None:
        if cursor.peek() == "fmt":
            pending.wants_error = True
            return
        want = parse_value(cursor, self.names)
        cursor.expect(",")
        if cursor.peek() != pending.result_var:
            return
        if isinstance(want, bool):
            pending.expected = "true" if want else "false"
        elif isinstance(want, str):
            pending.expected = want

    def finish(self) -> None:
        pending, self.pending = self.pending, None
        if pending is None:
            return
        expected = "error" if pending.wants_error and pending.call == "EvalCondition" else None
        expected = expected or pending.expected
        if expected is None:
            self.unreadable.append(f"{pending.call}{tuple(pending.args)}: no expectation read")
            return
        try:
            args = resolve(pending.args, self.names)
        except Unreadable as err:
            self.unreadable.append(f"{pending.call}: {err}")
            return
        if contains_opaque(args):
            self.unreadable.append(f"{pending.call}: an argument holds a value not read")
            return
        actual = _headway(pending.call, args)
        self.cases.append(Case(f"{pending.call}{_describe(args)}", expected, actual))


def _describe(args: list[Any]) -> str:
    shown = [_metric(arg) if isinstance(arg, Mapping) else repr(arg) for arg in args]
    return "(" + ", ".join(shown) + ")"


def _metric(metric: Mapping[str, Any]) -> str:
    shown = {k: v for k, v in metric.items() if k in ("SuccessCondition", "FailureCondition")}
    return f"Metric{shown}"


def _headway(call: str, args: list[Any]) -> str:
    result, second = args
    if call == "EvalCondition":
        try:
            value = compile_condition(str(second)).evaluate({"result": result})
        except ConditionError:
            return "error"
        return ("true" if value else "false") if isinstance(value, bool) else "error"
    metric = second if isinstance(second, Mapping) else {}
    conditions = compile_metric_conditions(
        "metric",
        success_condition=str(metric.get("SuccessCondition") or ""),
        failure_condition=str(metric.get("FailureCondition") or ""),
    )
    return str(measurement_outcome(conditions, result).phase)
