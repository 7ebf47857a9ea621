"""Glob patterns as Argo CD matches `directory.include` / `directory.exclude`.

Argo CD compiles them with gobwas/glob and no separator, so `*` and `**` match any run of
characters *including* `/` (`*.yaml` matches `sub/x.yaml`); `?` is one character; `[abc]`,
`[a-z]` and `[!abc]` are classes; `{a,b}` lists alternatives (nesting and wildcards allowed);
a backslash escapes the next character. The pattern matches the file path relative to the app
path. Purely computational.
"""

from __future__ import annotations

import re
from functools import lru_cache

from headway.source.errors import RenderError

__all__ = ["compile_glob", "glob_matches"]


class _Parser:
    def __init__(self, pattern: str, field: str) -> None:
        self.pattern = pattern
        self.field = field
        self.pos = 0

    def fail(self, message: str) -> RenderError:
        return RenderError(f"{self.field}: invalid glob {self.pattern!r}: {message}")

    def sequence(self, inside_braces: bool) -> str:
        out: list[str] = []
        while self.pos < len(self.pattern):
            char = self.pattern[self.pos]
            if inside_braces and char in ",}":
                return "".join(out)
            self.pos += 1
            out.append(self.token(char))
        if inside_braces:
            raise self.fail("'{' is never closed")
        return "".join(out)

    def token(self, char: str) -> str:
        if char == "*":
            while self.pos < len(self.pattern) and self.pattern[self.pos] == "*":
                self.pos += 1
            return ".*"
        if char == "?":
            return "."
        if char == "\\":
            if self.pos >= len(self.pattern):
                raise self.fail("it ends with a lone backslash")
            self.pos += 1
            return re.escape(self.pattern[self.pos - 1])
        if char == "[":
            return self.char_class()
        if char == "{":
            return self.alternatives()
        return re.escape(char)

    def char_class(self) -> str:
        end = self.pattern.find("]", self.pos)
        if end < 0:
            raise self.fail("'[' is never closed")
        body = self.pattern[self.pos : end]
        self.pos = end + 1
        negate = body.startswith("!")
        body = body[1:] if negate else body
        if not body:
            raise self.fail("empty character class")
        escaped = "".join("\\" + c if c in "\\]^[" else c for c in body)
        return f"[{'^' if negate else ''}{escaped}]"

    def alternatives(self) -> str:
        options: list[str] = []
        while True:
            options.append(self.sequence(inside_braces=True))
            char = self.pattern[self.pos]
            self.pos += 1
            if char == "}":
                return "(?:" + "|".join(options) + ")"


@lru_cache(maxsize=512)
def compile_glob(pattern: str, field: str = "glob") -> re.Pattern[str]:
    """The regex equivalent of `pattern`; `RenderError` naming `field` when it is malformed."""
    parser = _Parser(pattern, field)
    body = parser.sequence(inside_braces=False)
    try:
        return re.compile(f"^(?:{body})$", re.DOTALL)
    except re.error as err:
        raise parser.fail(str(err)) from None


def glob_matches(pattern: str, path: str, field: str = "glob") -> bool:
    return compile_glob(pattern, field).match(path) is not None
