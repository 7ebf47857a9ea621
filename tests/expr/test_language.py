"""The condition language, operator by operator, against values worked out by hand."""

from __future__ import annotations

import math
from typing import Any

import pytest

from headway.expr import compile_condition

ENV: dict[str, Any] = {
    "result": [0.31, 0.02, 7.0],
    "empty": [],
    "scalar": 0.5,
    "nan": math.nan,
    "inf": math.inf,
    "n": 3,
    "s": "Hello, World",
    "m": {"a": 1, "b": {"c": [10, 20]}, "nil": None},
    "pods": [{"name": "a", "ok": True, "rps": 2}, {"name": "b", "ok": False, "rps": 5}],
    "nothing": None,
    "flags": [True, False, True],
    "strs": ["x", "1", "2.5"],
}

CASES: list[tuple[str, Any]] = [
    # literals
    ("42", 42),
    ("0x2A", 42),
    ("0o52", 42),
    ("0b101010", 42),
    ("1_000", 1000),
    ("0.5", 0.5),
    (".5", 0.5),
    ("1e3", 1000.0),
    ("2.5e-1", 0.25),
    ('"double"', "double"),
    ("'single'", "single"),
    ('"tab\\tnew\\nline"', "tab\tnew\nline"),
    ("'it\\'s'", "it's"),
    ('"\\x41\\u00e9\\U0001F600\\101"', "Aé😀A"),
    ('"\\u{1F600}"', "😀"),
    ("`raw \\n`", "raw \\n"),
    ("true", True),
    ("false", False),
    ("nil", None),
    ("[1, 2, 3]", [1, 2, 3]),
    ("[1, 'a', [true]]", [1, "a", [True]]),
    ("[]", []),
    ("[1, 2,]", [1, 2]),
    ("{a: 1, 'b': 2, \"c\": 3}", {"a": 1, "b": 2, "c": 3}),
    ("{(s): 1}", {"Hello, World": 1}),
    ("{}", {}),
    ("1 /* inline */ + 2 // trailing", 3),
    # arithmetic
    ("1 + 2", 3),
    ("1 + 2.5", 3.5),
    ("'ab' + 'cd'", "abcd"),
    ("5 - 7", -2),
    ("3 * 4", 12),
    ("3 * 0.5", 1.5),
    ("7 / 2", 3.5),
    ("6 / 3", 2.0),
    ("7 % 3", 1),
    ("-7 % 3", -1),
    ("7 % -3", 1),
    ("2 ** 3", 8.0),
    ("2 ^ 3", 8.0),
    ("2 ** 3 ** 2", 512.0),
    ("-2 ** 2", -4.0),
    ("2 ** -1", 0.5),
    ("(-8) ** (1/3)", math.nan),
    ("10 ** 400", math.inf),
    ("0 ** -1", math.inf),
    ("1 + 2 * 3", 7),
    ("(1 + 2) * 3", 9),
    ("10 - 4 - 3", 3),
    ("2 * 3 % 4", 2),
    ("-n", -3),
    ("+n", 3),
    ("--n", 3),
    # comparison
    ("1 == 1.0", True),
    ("1 != 2", True),
    ("'a' == 'a'", True),
    ("nil == 1", False),
    ("'a' != nil", True),
    ("1 == 1.0", True),
    ("[1, 'a'] == [1, 2]", False),  # only the two sides' own types must agree
    ("nil == nil", True),
    ("nothing == nil", True),
    ("[1, 2] == [1.0, 2]", True),
    ("[1, 2] == [2, 1]", False),
    ("{a: 1} == {a: 1.0}", True),
    ("1 < 2", True),
    ("2 <= 2", True),
    ("3 > 2.5", True),
    ("2 >= 3", False),
    ("'abc' < 'abd'", True),
    ("1 < 2 < 3", True),
    ("1 < 3 < 2", False),
    ("3 > 2 > 1", True),
    ("1 < 2 == true", True),
    ("nan == nan", False),
    ("nan < 1", False),
    ("inf > 1e308", True),
    # logic
    ("true && false", False),
    ("true and true", True),
    ("false || true", True),
    ("false or false", False),
    ("!true", False),
    ("not false", True),
    ("!!true", True),
    ("not true == false", True),
    ("true || false && false", True),
    ("(true || false) && false", False),
    ("false && missing", False),
    ("true || missing", True),
    # membership and strings
    ("2 in [1, 2, 3]", True),
    ("2.0 in [1, 2, 3]", True),
    ("4 not in [1, 2, 3]", True),
    ("'a' in m", True),
    ("'z' in m", False),
    ("'z' not in m", True),
    ("1 in nothing", False),
    ("s contains 'World'", True),
    ("s not contains 'world'", True),
    ("s startsWith 'Hell'", True),
    ("s endsWith 'World'", True),
    ("s not endsWith 'x'", True),
    ("s matches '^H.*d$'", True),
    ("s matches 'h'", False),
    ("s not matches '[0-9]'", True),
    ("'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab' matches '(a+)+$'", False),
    # ranges, indexing, slicing
    ("1..3", [1, 2, 3]),
    ("3..1", []),
    ("result[0]", 0.31),
    ("result[-1]", 7.0),
    ("result[-3]", 0.31),
    ("result[1.9]", 0.02),
    ("result[1:]", [0.02, 7.0]),
    ("result[:1]", [0.31]),
    ("result[:]", [0.31, 0.02, 7.0]),
    ("result[1:-1]", [0.02]),
    ("result[-10:10]", [0.31, 0.02, 7.0]),
    ("result[2:1]", []),
    ("s[0]", "H"),
    ("s[0:5]", "Hello"),
    ("m.a", 1),
    ("m['a']", 1),
    ("m.b.c[1]", 20),
    ("m.missing", None),
    ("m?.b?.c", [10, 20]),
    ("nothing?.a", None),
    ("nothing?.a.b.c", None),
    ("nothing?.[0]", None),
    ("m.nil?.x", None),
    ("nothing ?? 5", 5),
    ("m.a ?? 5", 1),
    ("nothing?.a ?? 'fallback'", "fallback"),
    ("pods[1].name", "b"),
    # ternary
    ("true ? 1 : 2", 1),
    ("false ? 1 : 2", 2),
    ("n > 2 ? 'big' : 'small'", "big"),
    ("false ? 1 : true ? 2 : 3", 2),
    ("true ?: false", True),
    # predicates
    ("all(result, {# > 0})", True),
    ("all(result, # > 0.1)", False),
    ("all(empty, # > 0)", True),
    ("any(result, {# > 5})", True),
    ("any(empty, # > 0)", False),
    ("none(result, {# < 0})", True),
    ("one(result, {# > 5})", True),
    ("one(result, {# > 0.01})", False),
    ("filter(result, {# < 1})", [0.31, 0.02]),
    ("map(result, {# * 2})", [0.62, 0.04, 14.0]),
    ("map(pods, .name)", ["a", "b"]),
    ("map(pods, #.rps)", [2, 5]),
    ("map(result, #index)", [0, 1, 2]),
    ("filter(pods, .ok)[0].name", "a"),
    ("count(pods, .rps > 1)", 2),
    ("count(flags)", 2),
    ("sum([1, 2, 3])", 6),
    ("sum(pods, .rps)", 7),
    ("sum(result, # > 1 ? 1 : 0)", 1),
    ("find(pods, .rps > 3).name", "b"),
    ("find(pods, .rps > 9)", None),
    ("findIndex(result, # > 1)", 2),
    ("findLast(result, # < 1)", 0.02),
    ("findLastIndex(result, # > 9)", -1),
    ("all(map(pods, {.rps}), {# > 1})", True),
    ("any(pods, {any([1, 2], {# == 2})})", True),
    ("filter(1..9, # % 2 == 0)", [2, 4, 6, 8]),
    # builtins
    ("len(result)", 3),
    ("len(empty)", 0),
    ("len(s)", 12),
    ("len('héllo')", 5),
    ("len(m)", 3),
    ("abs(-2)", 2),
    ("abs(-2.5)", 2.5),
    ("max(result)", 7.0),
    ("max(1, 5, 3)", 5),
    ("max(1, [9, 2])", 9),
    ("min(result)", 0.02),
    ("max(empty)", None),
    ("mean([1, 2, 3, 4])", 2.5),
    ("median([3, 1, 2])", 2.0),
    ("median([4, 1, 2, 3])", 2.5),
    ("ceil(1.2)", 2.0),
    ("floor(-1.2)", -2.0),
    ("round(2.5)", 3.0),
    ("round(-2.5)", -3.0),
    ("int(2.9)", 2),
    ("int(-2.9)", -2),
    ("int('42')", 42),
    ("int('-7')", -7),
    ("float(2)", 2.0),
    ("float('2.5')", 2.5),
    ("string(42)", "42"),
    ("string(0.5)", "0.5"),
    ("string(1234567.0)", "1.234567e+06"),
    ("string(123456.0)", "123456"),
    ("string(0.00001)", "1e-05"),
    ("string(result)", "[0.31 0.02 7]"),
    ("string(nil)", "<nil>"),
    ("string(true)", "true"),
    ("string({b: 1, a: 'x'})", "map[a:x b:1]"),
    ("lower('ABC')", "abc"),
    ("upper('abc')", "ABC"),
    ("trim('  x  ')", "x"),
    ("trim('__x__', '_')", "x"),
    ("trimPrefix('HelloWorld', 'Hello')", "World"),
    ("trimSuffix('HelloWorld', 'World')", "Hello"),
    ("first(result)", 0.31),
    ("last(result)", 7.0),
    ("first(empty)", None),
    # Argo Rollouts helpers
    ("isNaN(nan)", True),
    ("isNaN(scalar)", False),
    ("isInf(inf)", True),
    ("isInf(1)", False),
    ("isNil(nothing)", True),
    ("isNil(result)", False),
    ("asInt('12')", 12),
    ("asInt(12.7)", 12),
    ("asFloat('0.25')", 0.25),
    ("asFloat(strs[2]) > 2", True),
    ("asFloat('NaN') != asFloat('NaN')", True),
    ("default(nothing, 0)", 0),
    ("default(scalar, 0)", 0.5),
    ("default(nothing, 0) < 0.8", True),
    ("all(map(strs[1:], {asFloat(#)}), {# > 0})", True),
]


def _same(actual: Any, expected: Any) -> bool:
    if isinstance(expected, float) and math.isnan(expected):
        return isinstance(actual, float) and math.isnan(actual)
    if isinstance(expected, list) and isinstance(actual, list):
        return len(actual) == len(expected) and all(map(_same, actual, expected))
    if isinstance(expected, float) and isinstance(actual, float):
        return math.isclose(actual, expected, rel_tol=1e-12) or actual == expected
    return type(actual) is type(expected) and bool(actual == expected)


@pytest.mark.parametrize(("condition", "expected"), CASES, ids=[c for c, _ in CASES])
def test_condition_evaluates_to_the_expected_value(condition: str, expected: Any) -> None:
    actual = compile_condition(condition).evaluate(ENV)
    assert _same(actual, expected), f"{condition} gave {actual!r}, expected {expected!r}"


def test_a_compiled_program_is_reusable_with_different_environments() -> None:
    program = compile_condition("len(result) > 0 && result[0] < 0.01")
    assert program.evaluate({"result": [0.001]}) is True
    assert program.evaluate({"result": [0.5]}) is False
    assert program.evaluate({"result": []}) is False


def test_the_environment_is_not_modified() -> None:
    env = {"result": [3, 1, 2]}
    compile_condition("filter(result, # > 1) == [3, 2] && map(result, # * 2)[0] == 6").evaluate(env)
    assert env == {"result": [3, 1, 2]}


def test_multi_line_conditions_from_yaml_block_scalars_compile() -> None:
    program = compile_condition("len(result) > 0 &&\n  result[0] < 0.02\n")
    assert program.evaluate({"result": [0.01]}) is True
