"""Reading the trailers of a commit message, as `git interpret-trailers` does. Pure.

A promotion commit ends with a paragraph of `Key: value` lines (`Headway-Promotion: <name>`,
`Headway-Environment: prod`, `Headway-Image: ...`, and `Headway-Revert-Of: <commit>` on a
re-commit of the previous image). Only the message's last paragraph counts, and only when
every line of it is a trailer: a body that quotes `Headway-Promotion: x` in prose, or a
`git revert` of a promotion commit (whose message names the original in quotes), is not
taken for the promotion's own commit.
"""

from __future__ import annotations

import re

__all__ = ["PROMOTION", "REVERT_OF", "line", "promotion_of", "trailers"]

PROMOTION = "Headway-Promotion"
REVERT_OF = "Headway-Revert-Of"
_LINE = re.compile(r"([A-Za-z0-9][A-Za-z0-9-]*):\s*(.*?)\s*")


def line(key: str, value: str) -> str:
    """`Key: value` with the value on one line: a reason typed with newlines would otherwise end
    the trailer paragraph early, and the commit would no longer be found as its promotion's."""
    return f"{key}: {' '.join(value.split())}"


def trailers(message: str) -> dict[str, list[str]]:
    """Key -> values of the message's trailer paragraph ({} when it has none)."""
    paragraphs = [p for p in re.split(r"\n\s*\n", message.strip()) if p.strip()]
    if len(paragraphs) < 2:  # a subject alone has no trailers
        return {}
    found: dict[str, list[str]] = {}
    for line in paragraphs[-1].splitlines():
        match = _LINE.fullmatch(line)
        if match is None:
            return {}
        found.setdefault(match.group(1), []).append(match.group(2))
    return found


def promotion_of(message: str, *, reverts: bool = False) -> str:
    """The promotion a commit was written for ("" if none); with `reverts`, only a re-commit
    of the previous image counts, without it only the promotion's own commit."""
    found = trailers(message)
    names = found.get(PROMOTION, [])
    if len(names) != 1 or (REVERT_OF in found) != reverts:
        return ""
    return names[0]
