"""Literal tokens to values, as expr-lang's lexer reads them."""

from __future__ import annotations

import math

from headway.expr.values import INT64_MAX

__all__ = ["LiteralError", "parse_float", "parse_int", "unescape"]

_SIMPLE_ESCAPES = {
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "`": "`",
    "?": "?",
}
_HEX_WIDTH = {"x": 2, "X": 2, "u": 4, "U": 8}


class LiteralError(ValueError):
    """A literal the lexer accepted but whose value is invalid; `offset` is within the token."""

    def __init__(self, problem: str, offset: int = 0) -> None:
        super().__init__(problem)
        self.offset = offset


def parse_int(token: str) -> int:
    digits = token.replace("_", "")
    base = {"0x": 16, "0o": 8, "0b": 2}.get(digits[:2].lower(), 10)
    try:
        value = int(digits[2:] if base != 10 else digits, base)
    except ValueError:
        raise LiteralError(f"invalid integer literal {token}") from None
    if value > INT64_MAX:
        raise LiteralError(f"integer literal {token} is too large")
    return value


def parse_float(token: str) -> float:
    value = float(token.replace("_", ""))
    if math.isinf(value):
        raise LiteralError(f"float literal {token} is too large")
    return value


def unescape(body: str) -> str:
    """The value of a quoted string's body (without its quotes), Go escapes included."""
    out: list[str] = []
    position = 0
    while position < len(body):
        char = body[position]
        if char != "\\":
            out.append(char)
            position += 1
            continue
        decoded, position = _escape(body, position)
        out.append(decoded)
    return "".join(out)


def _escape(body: str, start: int) -> tuple[str, int]:
    """Decode the escape at `start` (a backslash); return its text and the next position."""
    if start + 1 >= len(body):
        raise LiteralError("a string cannot end with a lone backslash", start)
    code = body[start + 1]
    if code in _SIMPLE_ESCAPES:
        return _SIMPLE_ESCAPES[code], start + 2
    if code == "u" and body[start + 2 : start + 3] == "{":
        close = body.find("}", start + 3)
        return _code_point(body[start + 3 : close] if close > 0 else "", start, 6), close + 1
    if code in _HEX_WIDTH:
        width = _HEX_WIDTH[code]
        digits = body[start + 2 : start + 2 + width]
        if len(digits) != width:
            raise LiteralError(f"\\{code} needs {width} hex digits", start)
        return _code_point(digits, start, width), start + 2 + width
    if code in "0123":
        digits = body[start + 1 : start + 4]
        if len(digits) != 3 or any(d not in "01234567" for d in digits):
            raise LiteralError("an octal escape needs three octal digits, like \\101", start)
        return chr(int(digits, 8)), start + 4
    raise LiteralError(f"unknown escape sequence \\{code}", start)


def _code_point(digits: str, start: int, max_width: int) -> str:
    if not digits or len(digits) > max_width:
        raise LiteralError("invalid unicode escape", start)
    try:
        value = int(digits, 16)
    except ValueError:
        raise LiteralError(f"invalid hex digits {digits!r} in escape", start) from None
    if value > 0x10FFFF or 0xD800 <= value <= 0xDFFF:
        raise LiteralError(f"\\u{digits} is not a valid code point", start)
    return chr(value)
