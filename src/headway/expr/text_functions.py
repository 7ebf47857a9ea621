"""String builtins, with Go's `strings` semantics as expr-lang calls them."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from headway.expr.errors import EvalProblem
from headway.expr.json_text import from_json, to_json
from headway.expr.signature import Builtin, need_int, need_list, need_string
from headway.expr.values import describe_value, type_name

__all__ = ["MAX_TEXT_LENGTH", "TEXT_FUNCTIONS"]

MAX_TEXT_LENGTH = 1_000_000
"""The longest string `repeat` may build, so one condition cannot exhaust memory."""


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
    """Go's ReplaceAll, or with a fourth argument `n` Replace: the first n (all when n < 0)."""
    text, old, new = (need_string("replace", arg) for arg in args[:3])
    count = need_int("replace", args[3]) if len(args) == 4 else -1
    return text.replace(old, new, count if count >= 0 else -1)


def _repeat(args: list[Any]) -> str:
    text, count = need_string("repeat", args[0]), need_int("repeat", args[1])
    if count < 0:
        raise EvalProblem(f"invalid argument for repeat (expected positive integer, got {count})")
    if len(text) * count > MAX_TEXT_LENGTH:
        raise EvalProblem(f"repeat would build more than {MAX_TEXT_LENGTH} characters")
    return text * count


def _byte_index(name: str, *, last: bool) -> Builtin:
    """Go's strings.Index / LastIndex: a position in UTF-8 bytes, -1 when absent."""

    def call(args: list[Any]) -> int:
        text, part = need_string(name, args[0]), need_string(name, args[1])
        found = text.rfind(part) if last else text.find(part)
        return found if found < 0 else len(text[:found].encode("utf-8"))

    return Builtin(name, 2, 2, call)


def _from_base64(args: list[Any]) -> str:
    text = need_string("fromBase64", args[0])
    try:
        return base64.b64decode(text.encode("ascii"), validate=True).decode("utf-8", "replace")
    except (ValueError, binascii.Error) as err:
        raise EvalProblem(f"fromBase64: {err}") from None


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
    Builtin("replace", 3, 4, _replace),
    Builtin("repeat", 2, 2, _repeat),
    _byte_index("indexOf", last=False),
    _byte_index("lastIndexOf", last=True),
    Builtin(
        "hasPrefix",
        2,
        2,
        lambda a: need_string("hasPrefix", a[0]).startswith(need_string("hasPrefix", a[1])),
    ),
    Builtin(
        "hasSuffix",
        2,
        2,
        lambda a: need_string("hasSuffix", a[0]).endswith(need_string("hasSuffix", a[1])),
    ),
    Builtin(
        "toBase64",
        1,
        1,
        lambda a: base64.b64encode(need_string("toBase64", a[0]).encode()).decode(),
    ),
    Builtin("fromBase64", 1, 1, _from_base64),
    Builtin("toJSON", 1, 1, lambda args: to_json(args[0])),
    Builtin("fromJSON", 1, 1, lambda args: from_json(need_string("fromJSON", args[0]))),
)
