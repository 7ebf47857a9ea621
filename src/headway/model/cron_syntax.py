"""Cron schedules whose verdict `croniter` is certain to give, known without importing it.

Validating an AppProject's sync window asks `croniter.is_valid`, and importing croniter
(with dateutil's time-zone modules) costs a `headway validate` run about as much as every
typed model's classes together. Most schedules are plain five-field ones (`0 22 * * 5`,
`*/15 9-17 * * 1-5`), and the usual mistake is not a schedule at all (`every friday`):
`known_verdict` answers those two cases (True: croniter accepts it, False: it refuses it)
and None for everything else, which croniter then decides. No answer changes:
`tests/model/test_cron_syntax.py` holds every verdict given here to croniter's.

Purely computational: no I/O.
"""

from __future__ import annotations

import re

__all__ = ["known_verdict"]

# Each field's (lowest, highest) value: minute, hour, day of month, month, day of week.
# Day of week stops at 6 (croniter also takes 7 for Sunday, but this answers for the plain
# form only); names (`mon`, `jan`), `?`, `L`, `#` and `@daily` are left to croniter.
_BOUNDS = ((0, 59), (0, 23), (1, 31), (1, 12), (0, 6))
# croniter's own columns: runs of non-blanks, ASCII blanks only; it takes 5, 6 or 7.
_COLUMN = re.compile(r"\S+", re.ASCII)
_COLUMN_COUNTS = (5, 6, 7)


def known_verdict(schedule: str) -> bool | None:
    """True for a plain schedule: five fields, one space apart, each a list of `*`, `N` or
    `N-M`, optionally `/STEP`, every number within its field's bounds, ranges ascending.
    False for a text without five to seven columns that names no `@` alias (`@daily`).
    None otherwise: only croniter knows."""
    if "@" not in schedule and len(_COLUMN.findall(schedule)) not in _COLUMN_COUNTS:
        return False
    fields = schedule.split(" ")
    if len(fields) != len(_BOUNDS):
        return None
    plain = all(
        _plain_field(field, low, high) for field, (low, high) in zip(fields, _BOUNDS, strict=True)
    )
    return True if plain else None


def _plain_field(field: str, low: int, high: int) -> bool:
    return all(_plain_item(item, low, high) for item in field.split(","))


def _plain_item(item: str, low: int, high: int) -> bool:
    span, slash, step = item.partition("/")
    if slash and not (_number(step) and 1 <= int(step) <= high):
        return False
    if span == "*":
        return True
    first, dash, last = span.partition("-")
    if not dash:
        return _number(first) and low <= int(first) <= high
    if not (_number(first) and _number(last)):
        return False
    return low <= int(first) <= int(last) <= high


def _number(text: str) -> bool:
    """One or two ASCII digits (`str.isdigit` also takes other scripts' digits)."""
    return 1 <= len(text) <= 2 and all("0" <= c <= "9" for c in text)
