"""What several rules derive from one Rollout is derived once per run (the template
references seven rules read), and every rule still sees it."""

from __future__ import annotations

import pytest

from check.conftest import FIXTURES, CheckDir
from headway.check import gates, ordering
from headway.check.context import CheckContext
from headway.model.yamlload import Document

NEVER_FIRES = FIXTURES / "HW214-analysis-never-fires" / "found"


def test_template_references_are_found_once_per_rollout(
    check_dir: CheckDir, monkeypatch: pytest.MonkeyPatch
) -> None:
    read: list[str] = []
    real = gates._analysis_blocks

    def counting(rollout: Document) -> object:
        read.append(rollout.name)
        return real(rollout)

    monkeypatch.setattr(gates, "_analysis_blocks", counting)
    findings = check_dir(NEVER_FIRES)
    assert {"HW214"} <= {f.rule for f in findings}  # rules reading the references still fire
    assert read == ["checkout-service"]


LUA_HEALTH = FIXTURES / "HW102-custom-kind-without-health" / "near_miss"


def test_lua_health_checks_are_read_once_per_run(
    check_dir: CheckDir, monkeypatch: pytest.MonkeyPatch
) -> None:
    """HW101 and HW102 both ask which kinds have a Lua health check in argocd-cm."""
    runs: list[int] = []
    real = ordering._lua_health_kinds

    def counting(ctx: CheckContext) -> frozenset[str]:
        runs.append(1)
        return real(ctx)

    monkeypatch.setattr(ordering, "_lua_health_kinds", counting)
    assert [f for f in check_dir(LUA_HEALTH) if f.rule == "HW102"] == []
    assert runs == [1]
