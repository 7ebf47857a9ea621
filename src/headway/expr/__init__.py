"""The analysis condition language (expr-lang syntax as Argo Rollouts uses it). No I/O.

`compile_condition(text) -> Program`, then `Program.evaluate({"result": value})`. Errors are
`ConditionSyntaxError` and `EvaluationError`, both `ConditionError`s. See docs/conditions.md.
"""

from headway.expr.errors import ConditionError, ConditionSyntaxError, EvaluationError
from headway.expr.program import Program, compile_condition
from headway.expr.values import describe_value

__all__ = [
    "ConditionError",
    "ConditionSyntaxError",
    "EvaluationError",
    "Program",
    "compile_condition",
    "describe_value",
]
