"""Numbers past what Python converts (4,300 digits) inside a condition: an Error that says
what is wrong, never an "internal error". Found by the fuzzing of `analysis evaluate`."""

from __future__ import annotations

import pytest

from headway.expr import EvaluationError, compile_condition


@pytest.mark.parametrize("function", ["int", "asInt"])
def test_a_five_thousand_digit_string_is_not_an_integer(function: str) -> None:
    program = compile_condition(f"{function}('{'9' * 5000}') > 1")
    with pytest.raises(EvaluationError) as raised:
        program.evaluate({"result": 1})
    message = str(raised.value)
    assert "internal error" not in message
    assert f"{function}: '{'9' * 40}... (5000 characters)' is not an integer" in message
