"""Paths and names as Argo CD's ApplicationSet generators compute them. Pure.

`path_matches` is Go's `path.Match` (the git directory generator: `*` stops at `/`);
`file_glob_matches` adds `**` for any number of directories (the git file generator's
globbing); `sanitize_name` is Argo's `normalize` (lower case, DNS characters, 253 long).
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["file_glob_matches", "path_matches", "sanitize_name", "slugify"]

_INVALID_DNS = re.compile(r"[^-a-z0-9.]")


def sanitize_name(name: str) -> str:
    """Lower case, every character outside `[-a-z0-9.]` a `-`, at most 253, trimmed of `-.`."""
    cleaned = _INVALID_DNS.sub("-", name.lower())[:253]
    return cleaned.strip("-.")


def slugify(name: str, max_length: int = 50) -> str:
    """A URL slug of `name` (Argo's `slugify`): sanitized, dots and runs of `-` folded, cut at
    a `-` boundary within `max_length` when one exists."""
    slug = re.sub(r"-+", "-", re.sub(r"[^a-z0-9-]", "-", sanitize_name(name))).strip("-")
    if len(slug) <= max_length:
        return slug
    cut = slug[:max_length]
    return cut.rsplit("-", 1)[0] if "-" in cut else cut


@lru_cache(maxsize=512)
def _compile(pattern: str, double_star: bool) -> re.Pattern[str]:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if double_star and pattern.startswith("**/", i):
            out.append("(?:[^/]*/)*")
            i += 3
            continue
        if double_star and pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = pattern.find("]", i + 1)
            if end < 0:
                raise ValueError(f"invalid pattern {pattern!r}: unclosed [")
            body = pattern[i + 1 : end]
            body = "^" + body[1:] if body.startswith(("!", "^")) else body
            out.append(f"[{body}]")
            i = end
        elif char == "\\" and i + 1 < len(pattern):
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(char))
        i += 1
    return re.compile("".join(out) + r"\Z")


def path_matches(pattern: str, path: str) -> bool:
    """Go's `path.Match(pattern, path)`: `*` and `?` never match `/`."""
    return _compile(pattern, False).match(path) is not None


def file_glob_matches(pattern: str, path: str) -> bool:
    """The git file generator's glob: as `path_matches`, and `**` spans directories."""
    return _compile(pattern, True).match(path) is not None
