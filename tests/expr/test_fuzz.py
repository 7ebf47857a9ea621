"""Random conditions and random values: only the two documented errors may ever come out."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from headway.expr import ConditionSyntaxError, EvaluationError, compile_condition

TOKENS = [
    "result", "result[0]", "result[-1]", "x", "#", ".a", "#index", "nil", "true", "false",
    "0", "1", "-1", "0.5", "1e308", "9223372036854775807", "'a'", '"b"', "`c`",
    "+", "-", "*", "/", "%", "**", "^", "==", "!=", "<", "<=", ">", ">=", "&&", "||",
    "and", "or", "not", "!", "in", "not in", "matches", "contains", "startsWith", "endsWith",
    "..", "??", "?.", "?", ":", ".", ",", "(", ")", "[", "]", "{", "}", "[1:]", "[:2]",
    "len(", "all(", "any(", "none(", "one(", "filter(", "map(", "count(", "sum(", "find(",
    "max(", "min(", "abs(", "int(", "float(", "string(", "lower(", "trim(", "isNaN(",
    "isInf(", "isNil(", "asInt(", "asFloat(", "default(", "first(", "mean(",
    "let v = result;", "v", "if", "else", "reduce(", "#acc", "groupBy(", "split(", "join(",
    "replace(", "toJSON(", "fromJSON(", "duration(", "'1m'", "bitshl(", "bitushr(", "uniq(",
    "flatten(", "concat(", "get(", "take(", "keys(", "values(", "sort(", "toPairs(",
    "fromPairs(", "repeat(", "indexOf(", "fromBase64(",
]  # fmt: skip

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.sampled_from(["a", "b", "x"]), children, max_size=3)
    ),
    max_leaves=12,
)


def _check(condition: str, env: dict[str, Any]) -> None:
    try:
        program = compile_condition(condition)
    except ConditionSyntaxError as err:
        assert str(err)
        return
    try:
        program.evaluate(env)
    except EvaluationError as err:
        assert "internal error" not in str(err), str(err)


@settings(max_examples=400, deadline=None)
@given(condition=st.text(max_size=40), result=JSON)
def test_random_text_raises_only_documented_errors(condition: str, result: Any) -> None:
    _check(condition, {"result": result, "x": result})


@settings(max_examples=800, deadline=None)
@given(tokens=st.lists(st.sampled_from(TOKENS), min_size=1, max_size=12), result=JSON)
def test_random_token_soup_raises_only_documented_errors(tokens: list[str], result: Any) -> None:
    _check(" ".join(tokens), {"result": result, "x": result})


@settings(max_examples=300, deadline=None)
@given(
    result=JSON,
    condition=st.sampled_from(
        [
            "result[0] < 0.02",
            "len(result) > 0 && result[0] < 0.01",
            "default(result[0], 0) < 0.8",
            "default(result, 0) < 0.8",
            "isNaN(result) || result >= 0.95",
            "all(result, {# < 1})",
            "result.a?.b ?? 0",
            "string(result) contains 'a'",
            "asFloat(result) > 1",
            "max(result) > 1 || min(result) < 0",
        ]
    ),
)
def test_real_conditions_with_random_results(condition: str, result: Any) -> None:
    _check(condition, {"result": result})
