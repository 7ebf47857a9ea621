"""Bad conditions and bad values: one clear error type each, naming where it went wrong."""

from __future__ import annotations

from typing import Any

import pytest

from headway.expr import ConditionSyntaxError, EvaluationError, compile_condition
from headway.expr.nodes import MAX_DEPTH

SYNTAX_ERRORS: list[tuple[str, int, str]] = [
    ("result[0] < )", 13, "unexpected ')'"),
    ("result[0] <", 12, "unexpected end of condition"),
    ("(1 + 2", 7, "unexpected end of condition"),
    ("1 +* 2", 4, "unexpected '*'"),
    ("result[0] @ 1", 11, "unexpected character '@'"),
    ("lenn(result)", 1, "unknown function lenn()"),
    ("len(result, 1)", 1, "len() takes 1 argument, but was given 2"),
    ("default(result)", 1, "default() takes 2 arguments"),
    ("all(result)", 1, "all() needs a predicate"),
    ("# > 1", 1, "inside a predicate"),
    ("map(result, #foo)", 14, "unknown pointer #foo"),
    ("'abc", 1, "unexpected character"),
    ('"bad \\q escape"', 1, "unknown escape sequence \\q"),
    ("99999999999999999999", 1, "integer literal 99999999999999999999 is too large"),
    ("1e999", 1, "float literal 1e999 is too large"),
    ("s matches '('", 1, "invalid regular expression"),
    ("", 1, "empty"),
    ("   ", 1, "empty"),
    ("result[0] < {{args.threshold}}", 14, "placeholder was not substituted"),
]


@pytest.mark.parametrize(("condition", "column", "fragment"), SYNTAX_ERRORS)
def test_syntax_errors_name_the_column_and_show_a_caret(
    condition: str, column: int, fragment: str
) -> None:
    with pytest.raises(ConditionSyntaxError) as caught:
        compile_condition(condition)
    err = caught.value
    assert fragment in err.problem
    assert err.column == column
    caret_line = str(err).splitlines()[-1]
    assert caret_line == " " * (column - 1) + "^"


def test_a_syntax_error_on_a_later_line_names_that_line() -> None:
    with pytest.raises(ConditionSyntaxError) as caught:
        compile_condition("len(result) > 0 &&\n  result[0] < )")
    assert (caught.value.line, caught.value.column) == (2, 15)
    assert str(caught.value).splitlines()[-2:] == ["  result[0] < )", " " * 14 + "^"]


def test_nesting_deeper_than_the_limit_is_refused_at_compile_time() -> None:
    assert compile_condition("(" * 40 + "1" + ")" * 40).evaluate({}) == 1
    with pytest.raises(ConditionSyntaxError, match="nests deeper"):
        compile_condition("[" * (MAX_DEPTH + 5) + "1" + "]" * (MAX_DEPTH + 5))
    with pytest.raises(ConditionSyntaxError, match="nests deeper"):
        compile_condition("!" * (MAX_DEPTH + 5) + "true")
    with pytest.raises(ConditionSyntaxError, match="nests deeper"):
        compile_condition(" + ".join(["1"] * (MAX_DEPTH + 5)))


def test_an_overlong_condition_is_refused() -> None:
    with pytest.raises(ConditionSyntaxError, match="longer than"):
        compile_condition("1 + " * 10_000 + "1")


ENV: dict[str, Any] = {"result": [0.5], "empty": [], "m": {"a": 1}, "nothing": None, "s": "x"}

EVALUATION_ERRORS: list[tuple[str, str]] = [
    ("empty[0] < 0.8", "empty[0]: index 0 out of range (array length is 0)"),
    ("result[1]", "result[1]: index 1 out of range (array length is 1)"),
    ("result[-2]", "index -2 out of range"),
    ("default(empty[0], 0) < 0.8", "empty[0]: index 0 out of range"),
    ("empty[0] ?? 0", "empty[0]: index 0 out of range"),
    ("'a' < 1", """'a' < 1: invalid operation: string < int ("a" < 1)"""),
    ("result < 1", "result < 1: invalid operation: array < int"),
    ("result[0] + 'x'", "invalid operation: float + string"),
    ("1 / 0", "1 / 0: division by zero"),
    ("result[0] / (result[0] - 0.5)", "division by zero"),
    ("5 % 0", "modulo by zero"),
    ("5.5 % 2", "invalid operation: float % int"),
    ("missing > 1", "missing: unknown name missing (known names: empty, m, nothing, result, s)"),
    ("nothing.a", 'nothing.a: cannot fetch "a" from nil'),
    ("result.a", 'cannot fetch "a" from array'),
    ("m[1]", "a map key must be a string"),
    ("result['x']", 'cannot fetch "x" from array'),
    ("result[true]", "an index must be a number, not bool"),
    ("result[0] && true", "&& needs a bool, but result[0] is float 0.5"),
    ("false || s", "|| needs a bool, but s is string"),
    ("!result", "! needs a bool"),
    ("result[0] ? 1 : 2", "?: needs a bool"),
    ("-s", "invalid operation: -string"),
    ("s in 'xyz'", 'operator "in" is not defined on string'),
    ("s contains 1", "invalid operation: string contains int"),
    ("len(nothing)", "len(nothing): invalid argument for len: nil"),
    ("len(1)", "invalid argument for len: int"),
    ("all(nothing, # > 1)", "all() needs an array, not nil"),
    ("all(result, # + 1)", "the predicate of all() must give a bool"),
    ("count(result)", "the predicate of count() must give a bool"),
    ("int('1.5')", "int: '1.5' is not an integer"),
    ("asInt('x')", "asInt: 'x' is not an integer"),
    ("asFloat('1,5')", "asFloat: '1,5' is not a number"),
    ("asFloat(nothing)", "invalid argument for asFloat: nil"),
    ("isNaN(result)", "invalid argument for isNaN: array"),
    ("lower(1)", "invalid argument for lower: int"),
    ("max('a')", "invalid argument for max: string"),
    ("9223372036854775807 + 1", "integer overflow"),
    ("-9223372036854775807 - 2", "integer overflow"),
    ("1..1000000", "longer than 100000 elements"),
    ("1..'a'", "invalid operation: int .. string"),
    ("s matches ('(' + s)", "invalid regular expression"),
    ("result[0] < 0.8 == 1 > s", "invalid operation: mismatched types bool and int (true and 1)"),
    ("'a' == 1", 'invalid operation: mismatched types string and int ("a" and 1)'),
    ("true != 1", "mismatched types bool and int"),
    ("asFloat('1.1') == '1.1'", "mismatched types float and string"),
    ("[1] == {a: 1}", "mismatched types array and map"),
]


@pytest.mark.parametrize(("condition", "fragment"), EVALUATION_ERRORS)
def test_evaluation_errors_name_the_sub_expression(condition: str, fragment: str) -> None:
    program = compile_condition(condition)
    with pytest.raises(EvaluationError) as caught:
        program.evaluate(ENV)
    assert fragment in str(caught.value)


def test_deeply_nested_values_are_an_evaluation_error_not_a_crash() -> None:
    value: Any = 1
    for _ in range(5000):
        value = [value]
    with pytest.raises(EvaluationError):
        compile_condition("result == result").evaluate({"result": value, "other": [value]})


def test_runaway_loops_stop_on_the_step_budget() -> None:
    program = compile_condition("len(map(1..100000, {len(map(1..100000, {# * 2}))})) > 0")
    with pytest.raises(EvaluationError, match="too much work"):
        program.evaluate({})
    # `let` shares one value many times; reading it is charged by its size, so nesting
    # shares cannot build (or compare, or print) exponentially large values.
    shared = (
        "let a = 1..1000; let b = [a, a, a, a, a, a, a, a, a, a]; "
        "let c = [b, b, b, b, b, b, b, b, b, b]; let d = [c, c, c, c, c, c, c, c, c, c]"
    )
    for use in ("c == c", "len(toJSON(c)) > 0", "len(flatten(c)) > 0", "len(string(c)) > 0"):
        with pytest.raises(EvaluationError, match="too much work"):
            compile_condition(f"{shared}; {use}").evaluate({})
    assert (
        compile_condition("let a = 1..1000; let b = [a, a]; len(flatten(b))").evaluate({}) == 2000
    )
    # A budget is per evaluation: the same program works again on small input.
    small = compile_condition("all(map(result, {map(result, {#})}), {len(#) == 3})")
    for _ in range(3):
        assert small.evaluate({"result": [1, 2, 3]}) is True
