"""`--transition BASE..HEAD` on real Git repositories with a real Helm chart."""

from __future__ import annotations

from pathlib import Path

import pytest

from headway.cli.check import run_check

from .conftest import FIXTURES
from .gitrepo import commit_states


def _transition(tmp_path: Path, fixture: str, case: str) -> list[tuple[str, str]]:
    base = FIXTURES / fixture / case
    commit_states(tmp_path, base / "before", base / "after")
    findings, _ = run_check(tmp_path, transition="HEAD~1..HEAD")
    return [(f.rule, f.message) for f in findings if f.rule.startswith("HW4")]


def test_two_merges_outage_is_found(tmp_path: Path) -> None:
    found = _transition(tmp_path, "HW401-transition-drops-key", "found")
    drops = [message for rule, message in found if rule == "HW401"]
    assert len(drops) == 1
    assert "env[name=SIGNER_KEY_ID]" in drops[0]
    assert "old spec, new content" in drops[0]


def test_duplicating_keys_first_is_safe(tmp_path: Path) -> None:
    assert _transition(tmp_path, "HW401-transition-drops-key", "near_miss") == []


def test_hidden_change_with_identical_end_states(tmp_path: Path) -> None:
    found = _transition(tmp_path, "HW402-transition-hidden-change", "found")
    assert [rule for rule, _ in found] == ["HW402"]


def test_hidden_change_near_miss(tmp_path: Path) -> None:
    assert _transition(tmp_path, "HW402-transition-hidden-change", "near_miss") == []


def test_end_states_render_cleanly(tmp_path: Path) -> None:
    """The end state itself raises no finding about rendering: the chart really renders."""
    base = FIXTURES / "HW401-transition-drops-key" / "found"
    commit_states(tmp_path, base / "before", base / "after")
    findings, apps = run_check(tmp_path)
    assert apps == 1
    assert [f for f in findings if f.rule == "HW002"] == []


@pytest.mark.parametrize("spec", ["HEAD", "..HEAD", "nope..HEAD"])
def test_bad_transition_is_a_usage_error(tmp_path: Path, spec: str) -> None:
    from headway.cli.check import UsageError

    base = FIXTURES / "HW401-transition-drops-key" / "found"
    commit_states(tmp_path, base / "before", base / "after")
    with pytest.raises(UsageError):
        run_check(tmp_path, transition=spec)
