"""`--transition BASE..HEAD` on real Git repositories with a real Helm chart."""

from __future__ import annotations

from pathlib import Path

import pytest

from check.conftest import FIXTURES
from check.gitrepo import commit_states
from headway.cli.check import run_check


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


CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {{name: widgets.example.com}}
spec:
  group: example.com
  names: {{kind: Widget, plural: widgets}}
  scope: Namespaced
  versions:
{versions}
"""
V1 = "    - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}\n"
V2 = "    - {name: v2, served: true, storage: false, schema: {openAPIV3Schema: {type: object}}}\n"
V2_STORED = V2.replace("storage: false", "storage: true")


def _crd_states(tmp_path: Path, before: str, after: str) -> Path:
    states = []
    for name, versions in (("before", before), ("after", after)):
        state = tmp_path / name
        state.mkdir()
        (state / "crd.yaml").write_text(CRD.format(versions=versions))
        states.append(state)
    root = tmp_path / "repo"
    root.mkdir()
    commit_states(root, *states)
    return root


def test_storage_version_removed_since_the_previous_commit(tmp_path: Path) -> None:
    root = _crd_states(tmp_path, V1 + V2, V2_STORED)
    findings, _ = run_check(root)
    removed = [f for f in findings if f.rule == "HW104"]
    assert len(removed) == 1
    assert "drops v1, its storage version" in removed[0].message
    assert str(removed[0].severity) == "error"


def test_expand_only_change_is_fine(tmp_path: Path) -> None:
    root = _crd_states(tmp_path, V1, V1 + V2)
    findings, _ = run_check(root)
    assert [f for f in findings if f.rule == "HW104"] == []


def test_transition_base_is_the_crd_comparison_point(tmp_path: Path) -> None:
    root = _crd_states(tmp_path, V1 + V2, V2_STORED)
    findings, _ = run_check(root, transition="HEAD~1..HEAD")
    assert [f.rule for f in findings if f.rule == "HW104"] == ["HW104"]
    findings, _ = run_check(root, transition="HEAD..HEAD")
    assert [f for f in findings if f.rule == "HW104"] == []


def test_two_merges_outage_also_has_an_empty_end_state_diff(tmp_path: Path) -> None:
    found = _transition(tmp_path, "HW401-transition-drops-key", "found")
    assert sorted(rule for rule, _ in found) == ["HW401", "HW402"]
