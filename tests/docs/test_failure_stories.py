"""docs/failure-stories.md cannot drift from the suite: every story row names at least one
test, and every test it names exists (the file, and the test function defined in it; a
bracketed parameter of the rule-fixture tests is a rule with a fixture directory, any other
appears in the test file). Read with `ast`, nothing imported."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "failure-stories.md"
TEST_ID = re.compile(r"`(tests/[\w/]+\.py)::(\w+)(?:\[([\w.-]+)\])?`")
RULE_FIXTURES = ROOT / "tests" / "check" / "fixtures"


def _rows() -> list[str]:
    rows = []
    for line in PAGE.read_text(encoding="utf-8").splitlines():
        if line.startswith("| ") and not line.startswith(("| story", "|---")):
            rows.append(line)
    return rows


@cache
def _defined(path: Path) -> frozenset[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return frozenset(
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    )


def test_every_story_names_a_test() -> None:
    rows = _rows()
    assert len(rows) >= 30, "the page lost its tables"
    bare = [row[:80] for row in rows if not TEST_ID.search(row)]
    assert not bare, f"stories naming no test: {bare}"


def test_every_named_test_exists() -> None:
    missing = []
    named = 0
    for row in _rows():
        for file, function, parameter in TEST_ID.findall(row):
            named += 1
            path = ROOT / file
            if not path.is_file() or function not in _defined(path):
                missing.append(f"{file}::{function}")
            elif parameter and file.endswith("test_rule_fixtures.py"):
                if not any(RULE_FIXTURES.glob(f"{parameter}-*")):
                    missing.append(f"{file}::{function}[{parameter}] (no such rule fixture)")
            elif parameter and parameter not in path.read_text(encoding="utf-8"):
                missing.append(f"{file}::{function}[{parameter}]")
    assert named >= 60
    assert not missing, missing


def test_every_status_is_one_the_page_defines() -> None:
    for row in _rows():
        status = row.rstrip(" |").rsplit("|", 1)[1].strip()
        assert status.split(":")[0] in ("prevented", "caught", "partly"), row[:80]
