"""String builtins, with Go's `strings` semantics as expr-lang calls them."""

from __future__ import annotations

from typing import Any

from headway.expr.errors import EvalProblem
from headway.expr.json_text import from_json, to_json
from headway.expr.signature import Builtin, need_int, need_list, need_string
from headway.expr.values import describe_value, type_name

__all__ = ["TEXT_FUNCTIONS"]


def _go_split(text: str, separator: str, limit: int, *, keep: bool) -> list[str]:
    """Go's SplitN / SplitAfterN: limit < 0 is all pieces, 0 is none, n is at most n pieces."""
    if limit == 0:
        return []
    if separator == "":
        pieces = list(text)
        if 0 < limit < len(pieces):
            pieces = [*pieces[: limit - 1], "".join(pieces[limit - 1 :])]
        return pieces
    pieces = text.split(separator, limit - 1 if limit > 0 else -1)
    if keep:
        pieces = [piece + separator for piece in pieces[:-1]] + pieces[-1:]
    return pieces


def _splitter(name: str, *, keep: bool) -> Builtin:
    def call(args: list[Any]) -> list[str]:
        limit = need_int(name, args[2]) if len(args) == 3 else -1
        text, separator = need_string(name, args[0]), need_string(name, args[1])
        return _go_split(text, separator, limit, keep=keep)

    return Builtin(name, 2, 3, call)


def _join(args: list[Any]) -> str:
    items = need_list("join", args[0])
    glue = need_string("join", args[1]) if len(args) == 2 else ""
    for item in items:
        if not isinstance(item, str):
            raise EvalProblem(
                f"join needs an array of strings, but it holds {type_name(item)} "
                f"{describe_value(item)}"
            )
    return glue.join(items)


def _replace(args: list[Any]) -> str:
    text, old, new = (need_string("replace", arg) for arg in args)
    return text.replace(old, new)


def _trim(args: list[Any]) -> str:
    text = need_string("trim", args[0])
    if len(args) == 1:
        return text.strip()
    return text.strip(need_string("trim", args[1]))


def _trim_prefix(args: list[Any]) -> str:
    affix = need_string("trimPrefix", args[1]) if len(args) == 2 else " "
    return need_string("trimPrefix", args[0]).removeprefix(affix)


def _trim_suffix(args: list[Any]) -> str:
    affix = need_string("trimSuffix", args[1]) if len(args) == 2 else " "
    return need_string("trimSuffix", args[0]).removesuffix(affix)


TEXT_FUNCTIONS = (
    Builtin("lower", 1, 1, lambda args: need_string("lower", args[0]).lower()),
    Builtin("upper", 1, 1, lambda args: need_string("upper", args[0]).upper()),
    Builtin("trim", 1, 2, _trim),
    Builtin("trimPrefix", 1, 2, _trim_prefix),
    Builtin("trimSuffix", 1, 2, _trim_suffix),
    _splitter("split", keep=False),
    _splitter("splitAfter", keep=True),
    Builtin("join", 1, 2, _join),
    Builtin("replace", 3, 3, _replace),
    Builtin("toJSON", 1, 1, lambda args: to_json(args[0])),
    Builtin("fromJSON", 1, 1, lambda args: from_json(need_string("fromJSON", args[0]))),
)
