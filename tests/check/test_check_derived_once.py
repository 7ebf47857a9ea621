"""What several rules derive from one Rollout is derived once per run (the template
references seven rules read), and every rule still sees it."""

from __future__ import annotations

import pytest

from check.conftest import FIXTURES, CheckDir
from headway.check import gates
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
