"""A condition text compiles once per process; errors are raised every time."""

from __future__ import annotations

import pytest

from headway.expr.errors import ConditionSyntaxError
from headway.expr.program import compile_condition


def test_the_same_text_shares_one_compiled_program() -> None:
    text = "len(result) > 0 && result[0] < 0.0125"
    first = compile_condition(text)
    assert compile_condition(text) is first
    assert first.evaluate({"result": [0.01]}) is True
    assert compile_condition(text).evaluate({"result": [0.02]}) is False


def test_a_bad_text_is_refused_on_every_call() -> None:
    for _ in range(2):
        with pytest.raises(ConditionSyntaxError, match="unexpected"):
            compile_condition("result[0] <")
