"""expr-lang's builtin tables: `builtin/builtin_test.go` of a checkout of expr-lang/expr.

`TestBuiltin` lists `{input, want}` rows evaluated with an `env` map; `TestBuiltin_errors`
lists `{input, err}` rows that must fail. Each row runs through `headway.expr`; a value matches
when it is Go's, type included (`5` is not `5.0`), an error row when Headway refuses it too.
Rows or env entries built from Go values Headway has no counterpart for (times, structs with
methods) are counted as not readable, as are the rows that use such an env entry.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from headway.conformance.go_source import (
    Cursor,
    Token,
    Unreadable,
    functions,
    parse_lenient,
    parse_value,
    read_tokens,
    resolve,
)
from headway.conformance.tables import Case, TableResult
from headway.expr import ConditionError, compile_condition, describe_value

__all__ = ["SUITE", "TEST_FILE", "run_builtin_tables"]

SUITE = "expr-lang builtins (builtin/builtin_test.go)"
TEST_FILE = Path("builtin/builtin_test.go")
_TABLES = {"TestBuiltin": "want", "TestBuiltin_errors": "err"}


def run_builtin_tables(expr_lang: Path) -> Iterator[TableResult]:
    try:
        tokens = read_tokens(expr_lang / TEST_FILE)
    except Unreadable as err:
        yield TableResult(SUITE, str(TEST_FILE), unreadable=(str(err),))
        return
    for name, body in functions(tokens, prefix="TestBuiltin"):
        if name in _TABLES:
            yield _run_table(name, body, outcome=_TABLES[name])


def _bindings(body: list[Token]) -> tuple[dict[str, Any], list[str]]:
    """Every `name := literal` / `var name = literal` of the function, read leniently."""
    names: dict[str, Any] = {}
    problems: list[str] = []
    cursor = Cursor(body)
    while cursor.position < len(body) - 2:
        if cursor.peek() == "var":
            cursor.take()
        if cursor.peek(1) in (":=", "=") and cursor.peek(2) in ("[", "map"):
            name = cursor.take().text
            cursor.take()
            try:
                names[name], skipped = parse_lenient(cursor, names)
            except Unreadable as err:
                problems.append(f"{name}: {err}")
                continue
            problems.extend(f"{name} {problem}" for problem in skipped)
        elif cursor.peek(1) == ":=":
            name = cursor.take().text
            cursor.take()
            try:
                names[name] = parse_value(cursor, names)
            except Unreadable:
                continue
        else:
            cursor.take()
    return names, problems


def _run_table(name: str, body: list[Token], *, outcome: str) -> TableResult:
    names, problems = _bindings(body)
    found_env = resolve(names.get("env"), names)  # `&name` entries point at earlier names
    env: Mapping[str, Any] = found_env if isinstance(found_env, Mapping) else {}
    missing = {p.split(" ")[1].strip('":') for p in problems if p.startswith("env ")}
    rows: list[Mapping[str, Any]] = next((v for v in names.values() if _is_table(v, outcome)), [])
    cases: list[Case] = []
    unreadable = [p for p in problems if not p.startswith("env ")]
    for row in rows:
        text = str(row["input"])
        uses = set(re.findall(r"[A-Za-z_]\w*", text)) & missing
        if uses:
            unreadable.append(f"{text}: uses env {', '.join(sorted(uses))}")
            continue
        want = "error" if outcome == "err" else _show(row["want"])
        cases.append(Case(text, want, _headway(text, env, errors_only=outcome == "err")))
    return TableResult(SUITE, name, tuple(cases), tuple(unreadable))


def _is_table(value: Any, outcome: str) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(row, Mapping) and {"input", outcome} <= set(row) for row in value)
    )


def _headway(text: str, env: Mapping[str, Any], *, errors_only: bool) -> str:
    try:
        value = compile_condition(text).evaluate(env)
    except ConditionError as err:
        return "error" if errors_only else f"error ({str(err).splitlines()[0]})"
    return _show(value)


def _show(value: Any) -> str:
    """The value with its Go kind, so `5` (int) and `5.0` (float) differ as in Go."""
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_show(item) for item in value) + "]"
    if isinstance(value, Mapping):
        items = sorted((_show(k), _show(v)) for k, v in value.items())
        return "{" + ", ".join(f"{k}: {v}" for k, v in items) + "}"
    if isinstance(value, bool) or value is None:
        return describe_value(value)
    return f"{type(value).__name__} {describe_value(value)}"
