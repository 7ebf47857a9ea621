"""Where a YAML stream's documents start, found in the text without parsing it.

YAML ends a document at a line that starts with `---` followed by a blank or the line's
end, whatever context it is in: a block scalar's content is indented past column 0, a plain
scalar stops there, and inside a quoted scalar or a flow collection the marker is a syntax
error. So a stream splits textually into pieces at those lines. Two readers rely on the
split: `yamlreuse` (which parses again only the pieces a change touched) and `yamlrust`
(which counts documents and their root lines for a parser that reports neither).

This module imports nothing beyond the standard library: `yamlrust` is configured by every
command at start-up, and a command that reads no YAML must not load a YAML library to find
out where documents would start.
"""

from __future__ import annotations

__all__ = ["document_pieces"]

# What a document start's `---` is followed by: a blank or the line's end ("" at the end).
_AFTER_MARKER = frozenset(("", " ", "\t", "\r", "\n"))


def document_pieces(text: str) -> list[str] | None:
    """`text` in pieces that join back to it: the text before the first document start
    (possibly empty), then each document start up to the next; None when the text holds
    something this split does not cover (`_splittable`). One `str.split` (a loop of
    `str.find` cost a quarter of the parse it saves)."""
    if not _splittable(text):
        return None
    parts = text.split("\n---")
    pieces = [parts[0]]
    for part in parts[1:]:
        if part[:1] in _AFTER_MARKER:
            pieces[-1] += "\n"
            pieces.append("---" + part)
        else:  # `---x`: not a document start
            pieces[-1] += "\n---" + part
    return pieces


def _splittable(text: str) -> bool:
    """Whether YAML sees the same lines and document starts as `document_pieces`: no line
    break beyond LF and CRLF (a lone CR, NEL, LS, PS), no directive (`%` at the start of a
    line applies to the next document), no byte-order mark past the first character (YAML
    skips one at the start of any line). Plain string searches: a regular expression over
    the text cost more than the parse it saves."""
    if "\r" in text and text.count("\r") != text.count("\r\n"):
        return False
    if "\x85" in text or "\u2028" in text or "\u2029" in text or text.find("\ufeff", 1) != -1:
        return False
    return "%" not in text or not (text.startswith("%") or "\n%" in text)
