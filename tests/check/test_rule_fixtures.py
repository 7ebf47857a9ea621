"""Every rule has a fixture it must find and a near miss it must not."""

from __future__ import annotations

from pathlib import Path

import pytest

from check.conftest import FIXTURES, CheckDir
from headway.check.registry import ALL_RULES, CLI_RULES

RULE_IDS = [rule.id for rule in ALL_RULES]
# Transition rules need two commits; tests/check/test_transition.py builds them from the
# same fixture directories (before/ and after/ instead of found/ and near_miss/).
STATIC_RULE_IDS = [rule.id for rule in ALL_RULES if rule not in CLI_RULES]


def _fixture_dir(rule_id: str) -> Path:
    matches = sorted(FIXTURES.glob(f"{rule_id}-*"))
    assert matches, f"no fixture directory for {rule_id} under {FIXTURES}"
    return matches[0]


@pytest.mark.parametrize("rule_id", STATIC_RULE_IDS)
def test_rule_finds_its_case(rule_id: str, check_dir: CheckDir) -> None:
    found = [f for f in check_dir(_fixture_dir(rule_id) / "found") if f.rule == rule_id]
    assert found, f"{rule_id} found nothing in its fixture"
    for finding in found:
        assert finding.file and finding.line >= 1 and finding.message and finding.hint


@pytest.mark.parametrize("rule_id", STATIC_RULE_IDS)
def test_rule_ignores_its_near_miss(rule_id: str, check_dir: CheckDir) -> None:
    findings = check_dir(_fixture_dir(rule_id) / "near_miss")
    assert [f for f in findings if f.rule == rule_id] == []


def test_fixture_directories_match_rules() -> None:
    names = {p.name.split("-", 1)[0] for p in FIXTURES.glob("HW*") if p.is_dir()}
    assert names == set(RULE_IDS)


def test_every_rule_is_documented() -> None:
    docs = (Path(__file__).parents[2] / "docs" / "checks.md").read_text()
    for rule in ALL_RULES:
        assert f"### {rule.id} `{rule.slug}` ({rule.severity}" in docs, rule.id
