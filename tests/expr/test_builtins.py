"""expr-lang's builtins beyond the basics, each against a value worked out by hand from
expr-lang's documented behaviour (and Go's `strings`, `encoding/json` and `time`)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from headway.expr import ConditionSyntaxError, EvaluationError, compile_condition

ENV: dict[str, Any] = {
    "result": [0.2, 0.7, 0.4],
    "web": {"pods": [{"zone": "a", "rps": 3}, {"zone": "b", "rps": 4}, {"zone": "a", "rps": 5}]},
    "csv": "a,b,,c",
}

CASES: list[tuple[str, Any]] = [
    # strings
    ('split(csv, ",")', ["a", "b", "", "c"]),
    ('split(csv, ",", 2)', ["a", "b,,c"]),
    ('split(csv, ",", 0)', []),
    ('split(csv, ",", -1)', ["a", "b", "", "c"]),
    ('split("abc", "")', ["a", "b", "c"]),
    ('split("abc", "", 2)', ["a", "bc"]),
    ('split("", ",")', [""]),
    ('splitAfter("a,b,c", ",")', ["a,", "b,", "c"]),
    ('splitAfter("a,b,c", ",", 2)', ["a,", "b,c"]),
    ('join(["a", "b", "c"], ", ")', "a, b, c"),
    ('join(["a", "b"])', "ab"),
    ("join([])", ""),
    ('replace("a-b-c", "-", "+")', "a+b+c"),
    ('replace("ab", "", "-")', "-a-b-"),
    ('replace("a-b-c-d", "-", "+", 2)', "a+b+c-d"),
    ('replace("a-b", "-", "+", -1)', "a+b"),
    ('repeat("ab", 3)', "ababab"),
    ('repeat("ab", 0)', ""),
    ('indexOf("a,b,c", ",")', 1),
    ('indexOf("é,b", ",")', 2),  # Go counts UTF-8 bytes
    ('lastIndexOf("a,b,c", ",")', 3),
    ('indexOf("abc", "z")', -1),
    ('hasPrefix("canary-v2", "canary")', True),
    ('hasSuffix("canary-v2", "v1")', False),
    ('toBase64("hello")', "aGVsbG8="),
    ('fromBase64("aGVsbG8=")', "hello"),
    ('trim("  x  ")', "x"),
    ('trim("__x__", "_")', "x"),
    ('trimPrefix("HelloWorld", "Hello")', "World"),
    ('trimSuffix("HelloWorld", "World")', "Hello"),
    ('upper("aBc")', "ABC"),
    ('lower("aBc")', "abc"),
    # maps and arrays
    ('keys({"a": 1, "b": 2})', ["a", "b"]),
    ('values({"a": 1, "b": 2})', [1, 2]),
    ('get({"a": 1}, "a")', 1),
    ('get({"a": 1}, "z")', None),
    ("get(result, 1)", 0.7),
    ("get(result, -1)", 0.4),
    ("get(result, 9)", None),
    ("get(nil, 0)", None),
    ("take(result, 2)", [0.2, 0.7]),
    ("take(result, 10)", [0.2, 0.7, 0.4]),
    ("take(result, 0)", []),
    ("concat([1], [2, 3], [])", [1, 2, 3]),
    ("flatten([1, [2, [3, [4]]], []])", [1, 2, 3, 4]),
    ("uniq([1, 2, 1.0, 3, 2])", [1, 2, 3]),
    ('uniq([true, 1, "1", nil, nil])', [True, 1, "1", None]),
    ("uniq([[1], [1], [2]])", [[1], [2]]),
    ("reverse([1, 2, 3])", [3, 2, 1]),
    ("sort([3, 1.5, 2])", [1.5, 2, 3]),
    ('sort(["b", "a"], "desc")', ["b", "a"]),
    ('toPairs({"a": 1})', [["a", 1]]),
    ('fromPairs([["a", 1], ["b", 2]])', {"a": 1, "b": 2}),
    ('fromPairs(toPairs({"x": [1]}))', {"x": [1]}),
    # predicates: reduce and groupBy
    ("reduce(1..4, #acc + #)", 10),
    ("reduce(1..4, #acc + #, 100)", 110),
    ("reduce([5], #acc * 2)", 5),  # one element, no initial value: nothing to apply
    ("reduce([], #acc + #, 0)", 0),
    ("reduce(result, #acc + #index, 0)", 3),
    ("reduce(web.pods, #acc + .rps, 0)", 12),
    (
        "groupBy(web.pods, .zone)",
        {"a": [{"zone": "a", "rps": 3}, {"zone": "a", "rps": 5}], "b": [{"zone": "b", "rps": 4}]},
    ),
    ("len(groupBy(1..10, # % 3))", 3),
    ("groupBy(1..4, # > 2)[true]", [3, 4]),
    ("groupBy(1..4, # % 2)[0]", [2, 4]),
    ("true in groupBy(1..4, # > 3)", True),
    ("5 in groupBy(1..4, #)", False),
    # numbers
    ("sum([1, 2, 3])", 6),
    ("sum([1, 2.5])", 3.5),
    ("sum([])", 0),
    ("sum(web.pods, .rps)", 12),
    ("mean([1, 2, 3, 4])", 2.5),
    ("mean([])", 0.0),
    ("median([3, 1, 2])", 2.0),
    ("median([4, 1, 3, 2])", 2.5),
    ("round(2.5)", 3.0),
    ("round(-2.5)", -3.0),
    ("floor(-1.5)", -2.0),
    ("ceil(1.2)", 2.0),
    # bits
    ("bitand(0b1010, 0b1100)", 0b1000),
    ("bitor(0b1010, 0b1100)", 0b1110),
    ("bitxor(0b1010, 0b1100)", 0b110),
    ("bitnand(0b1010, 0b1100)", 0b10),
    ("bitnot(0b1010)", -0b1011),
    ("bitshl(0b101101, 2)", 0b10110100),
    ("bitshr(0b101101, 2)", 0b1011),
    ("bitshr(-8, 1)", -4),
    ("bitushr(-0b101, 2)", 4611686018427387902),
    # JSON: Go's MarshalIndent (two spaces, sorted keys, integral floats without a fraction)
    ("toJSON(1.0)", "1"),
    ("toJSON(0.00001)", "0.00001"),
    ("toJSON(1e-7)", "1e-7"),
    ("toJSON(1e21)", "1e+21"),
    ('toJSON("<a & b>")', '"\\u003ca \\u0026 b\\u003e"'),
    ('toJSON("é")', '"é"'),
    ("toJSON([])", "[]"),
    ("toJSON({})", "{}"),
    ("toJSON(nil)", "null"),
    ('toJSON({"b": [1, true], "a": nil})', '{\n  "a": null,\n  "b": [\n    1,\n    true\n  ]\n}'),
    ('fromJSON("[1, 2.5, \\"x\\", null]")', [1.0, 2.5, "x", None]),
    ('fromJSON("{\\"a\\": {\\"b\\": 3}}").a.b', 3.0),
    ('fromJSON(toJSON({"x": [1, 2]}))', {"x": [1.0, 2.0]}),
    # durations
    ('string(duration("1h30m"))', "1h30m0s"),
    ('string(duration("1.5s"))', "1.5s"),
    ('string(duration("300ms"))', "300ms"),
    ('string(duration("-90s"))', "-1m30s"),
    ('string(duration("1us"))', "1µs"),
    ('string(duration("0"))', "0s"),
    ('string(duration("1h") + duration("15m"))', "1h15m0s"),
    ('string(duration("1h") - duration("2h"))', "-1h0m0s"),
    ('duration("90s") > duration("1m")', True),
    ('duration("60s") == duration("1m")', True),
    ('duration("2m") <= duration("119s")', False),
    # let and if/else
    ("let x = 2; x * 3", 6),
    ("let x = 2; let y = x + 1; x * y", 6),
    ("let result = 5; result", 5),  # a let name hides a variable of the same name
    ("let top = result[1]; top > 0.5 && top < 1", True),
    ("filter(result, {let v = #; v > 0.3})", [0.7, 0.4]),
    ("let r = result; all(r, {# <= max(r)})", True),
    ('if result[0] > 0.5 { "high" } else { "low" }', "low"),
    ('if result[1] > 0.5 { "high" } else { "low" }', "high"),
    ('if result[0] > 0.5 { "high" } else if result[0] > 0.1 { "mid" } else { "low" }', "mid"),
    ("if len(result) == 0 { false } else { result[0] < 0.5 }", True),
]


@pytest.mark.parametrize(("condition", "expected"), CASES, ids=[c for c, _ in CASES])
def test_builtin_gives_expr_langs_value(condition: str, expected: Any) -> None:
    actual = compile_condition(condition).evaluate(ENV)
    assert actual == expected
    assert type(actual) is type(expected)


ERRORS: list[tuple[str, str]] = [
    ("split(1, ',')", "invalid argument for split: int 1"),
    ("join([1, 2], ',')", "join needs an array of strings, but it holds int 1"),
    ("keys(result)", "invalid argument for keys: array"),
    ("take(result, -1)", "cannot take -1 elements"),
    ("take(result, 1.5)", "invalid argument for take: float 1.5"),
    ("concat([1], 2)", "invalid argument for concat: int 2"),
    ("reduce([], #acc + #)", "reduce of empty array with no initial value"),
    ("groupBy(web.pods, [#])", "groupBy() cannot group by array"),
    ("bitand(1.5, 1)", "invalid argument for bitand: float 1.5"),
    ("bitshl(1, -1)", "negative shift count -1"),
    ('fromJSON("{")', "fromJSON: not valid JSON"),
    ('fromJSON("NaN")', "fromJSON: not valid JSON"),
    ('fromJSON("5e2482")', "out of range"),
    ("get(1, 2)", "type int does not support indexing"),
    ('repeat("ab", -1)', "expected positive integer"),
    ('repeat("ab", 1000000)', "more than 1000000 characters"),
    ('fromBase64("%%")', "fromBase64"),
    ('sort([1, "a"])', "an array of numbers or an array of strings"),
    ('sort([1], "up")', "unknown order"),
    ('fromPairs([["a"]])', "invalid pair"),
    ('duration("5")', "invalid duration"),
    ('duration("5 minutes")', "duration"),
    ('duration("1d")', "unknown unit duration"),
    ('duration("9999999999h")', "out of range"),
    ('duration("1m") > 60', "invalid operation: duration > int"),
    ("if 1 { 2 } else { 3 }", "?: needs a bool, but 1 is int 1"),
]


@pytest.mark.parametrize(("condition", "fragment"), ERRORS)
def test_bad_arguments_are_evaluation_errors(condition: str, fragment: str) -> None:
    with pytest.raises(EvaluationError) as raised:
        compile_condition(condition).evaluate(ENV)
    assert fragment in str(raised.value)


def test_json_refuses_nan_as_go_does() -> None:
    with pytest.raises(EvaluationError, match="unsupported value: nan"):
        compile_condition("toJSON(result)").evaluate({"result": [math.nan]})


@pytest.mark.parametrize(
    ("condition", "fragment"),
    [
        ('replace("a", "b")', "replace() takes 3 to 4 arguments, but was given 2"),
        ("let x = 1", "unexpected end of condition"),
        ("if true { 1 }", "unexpected end of condition"),
        ("reduce(result)", "expected ','"),
        ("#acc", "only be used inside a predicate"),
    ],
)
def test_malformed_uses_are_syntax_errors(condition: str, fragment: str) -> None:
    with pytest.raises(ConditionSyntaxError) as raised:
        compile_condition(condition)
    assert fragment in str(raised.value)


def test_names_that_start_like_keywords_are_still_names() -> None:
    env = {"letter": 1, "iffy": 2, "elsewhere": 3, "reducer": 4}
    assert compile_condition("letter + iffy + elsewhere + reducer").evaluate(env) == 10
