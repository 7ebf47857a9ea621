"""The two errors the condition language raises; nothing else escapes compile or evaluate."""

from __future__ import annotations

__all__ = ["ConditionError", "ConditionSyntaxError", "EvaluationError"]


class ConditionError(Exception):
    """Base of every error a condition can raise."""


class ConditionSyntaxError(ConditionError):
    """A condition that cannot be compiled, with the place it went wrong.

    `str()` gives the problem, then the offending source line with a caret under the column,
    so a CLI can print it as it is.
    """

    def __init__(self, problem: str, *, source: str, line: int = 1, column: int = 1) -> None:
        self.problem = problem
        self.source = source
        self.line = line
        self.column = column
        super().__init__(self._render())

    @property
    def caret(self) -> str:
        """The offending line and a caret under the column, two lines of text."""
        lines = self.source.splitlines() or [""]
        text = lines[min(self.line, len(lines)) - 1]
        return f"{text}\n{' ' * (self.column - 1)}^"

    def _render(self) -> str:
        where = f"column {self.column}"
        if self.line > 1:
            where = f"line {self.line}, {where}"
        return f"syntax error at {where}: {self.problem}\n{self.caret}"


class EvaluationError(ConditionError):
    """A runtime problem, named by the sub-expression it happened in."""


class EvalProblem(Exception):
    """Raised by value helpers that do not know which sub-expression called them.

    The node that called the helper catches it and re-raises an `EvaluationError` naming
    itself, so helpers stay free of source text.
    """
