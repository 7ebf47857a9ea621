"""Compile a condition once, evaluate it many times.

    program = compile_condition("len(result) > 0 && result[0] < 0.01")
    program.evaluate({"result": [0.004]})   # -> True

`compile_condition` raises `ConditionSyntaxError` (with line, column and a caret line);
`Program.evaluate` raises `EvaluationError` naming the failing sub-expression. No other
exception escapes either of them.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import lark
from lark import Lark, Token
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from headway.expr.builder import Builder, CompileProblem
from headway.expr.errors import ConditionSyntaxError, EvaluationError
from headway.expr.nodes import Budget, Frame, NilChain, Node
from headway.private_files import private_path

__all__ = ["MAX_CONDITION_LENGTH", "Program", "compile_condition"]

MAX_CONDITION_LENGTH = 16_384
"""Conditions are one line or a few; anything longer is refused before parsing."""


@functools.cache
def _parser() -> Lark:
    grammar = resources.files("headway.expr").joinpath("conditions.lark").read_text("utf-8")
    return Lark(
        grammar,
        parser="lalr",
        transformer=Builder(),
        maybe_placeholders=True,
        cache=_parser_cache_file(grammar),
    )


def _parser_cache_file(grammar: str) -> str | bool:
    """Where Lark keeps the parse tables it builds from the grammar, so that a new process
    (`headway check` in a pre-commit hook) loads them instead of building them again; False
    (build every time) when the user's cache directory cannot be made, or when it or the
    file could be written by another user (`private_files`).

    One file per grammar, Lark and Python version. Lark also writes its own key (the grammar,
    the options, both versions) at the top of the file and rebuilds, overwriting it, when the
    key differs or the file does not load (truncated, corrupt): a bad cache costs one build."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    directory = os.path.join(base, "headway")
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
    except OSError:
        return False
    key = hashlib.sha256(grammar.encode("utf-8")).hexdigest()[:16]
    python = "{}{}".format(*sys.version_info[:2])
    file = os.path.join(directory, f"conditions-{key}-lark{lark.__version__}-py{python}.cache")
    # Lark unpickles the file: one another user could write would run their code.
    return file if private_path(file) else False


@dataclass(frozen=True)
class Program:
    """A compiled condition. Immutable and safe to share between threads."""

    source: str
    _root: Node = field(repr=False, compare=False)

    def evaluate(self, env: Mapping[str, Any]) -> Any:
        """The value of the condition with `env` as its names (Argo passes `result`)."""
        try:
            return self._root.run(Frame(env, Budget()))
        except EvaluationError:
            raise
        except NilChain:  # pragma: no cover - every chain that can raise it catches it
            return None
        except RecursionError:
            raise EvaluationError(f"{self.source}: the values nest too deeply") from None
        except Exception as exc:  # a bug in Headway, reported rather than escaping
            raise EvaluationError(
                f"internal error evaluating {self.source!r}: {type(exc).__name__}: {exc}"
            ) from exc


def compile_condition(text: str) -> Program:
    """Parse and check `text`; raise `ConditionSyntaxError` if it is not a valid condition."""
    if not isinstance(text, str):
        raise ConditionSyntaxError("a condition must be a string", source=str(text))
    if not text.strip():
        raise ConditionSyntaxError("the condition is empty", source=text)
    if len(text) > MAX_CONDITION_LENGTH:
        raise ConditionSyntaxError(
            f"the condition is longer than {MAX_CONDITION_LENGTH} characters", source=text[:80]
        )
    return _compiled(text)


@functools.lru_cache(maxsize=1024)
def _compiled(text: str) -> Program:
    """A program per distinct text: Programs are immutable, and a repository's templates
    repeat the same few conditions (one template copied per service is 1,000 parses)."""
    try:
        root = _parser().parse(text)
    except CompileProblem as problem:
        raise ConditionSyntaxError(
            problem.problem, source=text, line=problem.line, column=problem.column
        ) from None
    except UnexpectedInput as err:
        raise _syntax_error(err, text) from None
    except RecursionError:
        raise ConditionSyntaxError("the condition nests too deeply", source=text) from None
    if not isinstance(root, Node):  # pragma: no cover - the grammar always yields a Node
        raise ConditionSyntaxError("the condition did not compile to an expression", source=text)
    if root.uses_pointer:
        raise ConditionSyntaxError(
            "# and .field can only be used inside a predicate, like all(result, {# < 1})",
            source=text,
        )
    return Program(text, root)


def _syntax_error(err: UnexpectedInput, text: str) -> ConditionSyntaxError:
    line, column = max(err.line, 1), max(err.column, 1)
    if isinstance(err, UnexpectedCharacters):
        problem = f"unexpected character {err.char!r}"
    elif isinstance(err, UnexpectedToken) and err.token.type == "$END":
        lines = text.splitlines() or [""]
        line, column = len(lines), len(lines[-1]) + 1
        problem = "unexpected end of condition" + _expected(err)
    elif isinstance(err, UnexpectedToken):
        problem = f"unexpected {_describe_token(err.token)}" + _expected(err)
    else:  # pragma: no cover - LALR raises only the two kinds above
        problem = str(err).splitlines()[0]
    if "{{" in text:
        problem += " (an Argo {{args...}} placeholder was not substituted)"
    return ConditionSyntaxError(problem, source=text, line=line, column=column)


def _describe_token(token: Token) -> str:
    return f"{token.value!r}"


def _expected(err: UnexpectedToken) -> str:
    """`, expected one of ')' ','` from lark's terminal names, when the list is short."""
    spelled = sorted({_spell(name) for name in err.accepts or err.expected})
    if not spelled or len(spelled) > 6:
        return ""
    return ", expected " + " or ".join(spelled)


@functools.cache
def _spell(terminal: str) -> str:
    try:
        pattern = _parser().get_terminal(terminal).pattern
    except KeyError:
        return terminal.lower()
    if pattern.type == "str":
        return repr(pattern.value)
    names = {
        "NAME": "a name",
        "INT": "a number",
        "FLOAT": "a number",
        "STRING": "a string",
        "RAW_STRING": "a string",
    }
    return names.get(terminal, terminal.lower())
