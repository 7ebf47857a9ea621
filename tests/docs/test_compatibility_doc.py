"""docs/compatibility.md promises a pinning test for every deliberate difference from Argo:
each test it names must exist, so the page cannot drift from the suite."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "compatibility.md"
_REFERENCE = re.compile(r"`(tests/[\w/]+\.py)?(?:::([\w]+)(?:\[[^\]]*\])?)?`")


def _rows() -> list[str]:
    lines = PAGE.read_text().splitlines()
    return [line for line in lines if line.startswith("| ") and "`tests/" in line]


def _references(row: str) -> list[tuple[str, str | None]]:
    """(file, test) pairs; a bare `::name` continues the file named before it."""
    found: list[tuple[str, str | None]] = []
    current = ""
    for match in _REFERENCE.finditer(row.rsplit("|", 2)[-2]):
        file, test = match.group(1), match.group(2)
        if file:
            current = file
        if current and (file or test):
            found.append((current, test))
    return found


def test_every_row_names_a_test() -> None:
    table = [line for line in PAGE.read_text().splitlines() if line.startswith("| ")][2:]
    assert table, "the compatibility table is empty"
    missing = [row[:80] for row in table if "`tests/" not in row]
    assert missing == [], f"rows without a pinning test: {missing}"


def test_every_named_test_exists() -> None:
    problems: list[str] = []
    references = [ref for row in _rows() for ref in _references(row)]
    assert len(references) >= len(_rows()) > 0
    for file, test in references:
        path = ROOT / file
        if not path.is_file():
            problems.append(f"{file}: no such file")
        elif test and not re.search(rf"def {re.escape(test)}\(", path.read_text()):
            problems.append(f"{file}::{test}: no such test")
    assert problems == [], "\n".join(problems)
