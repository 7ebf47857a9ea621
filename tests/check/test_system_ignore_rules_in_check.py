"""`headway check` reads a repository's argocd-cm system-wide ignore rules as the controller does.

Before: a repository whose argocd-cm ignored a Rollout's `/spec/replicas` for every app was
still told (HW307) to add the rule to each Application, and nothing flagged a system rule that
hid every workload's image.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from check.conftest import FIXTURES, CheckDir

SYSTEM_REPLICAS = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-cm
  namespace: argocd
data:
  resource.customizations.ignoreDifferences.{key}: |
    jsonPointers:
    - /spec/replicas
"""


def _hpa_case(tmp_path: Path, key: str | None) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(FIXTURES / "HW307-hpa-replicas-self-heal" / "found", root)
    if key is not None:
        (root / "argocd").mkdir()
        (root / "argocd" / "argocd-cm.yaml").write_text(SYSTEM_REPLICAS.format(key=key))
    return root


def test_a_system_rule_for_the_rollouts_replicas_answers_hw307(
    tmp_path: Path, check_dir: CheckDir
) -> None:
    for key, reported in (
        (None, True),
        ("argoproj.io_Rollout", False),
        ("all", False),
        ("apps_Deployment", True),  # not the Rollout's kind
        ("Rollout", True),  # no group: the core group only
    ):
        root = _hpa_case(tmp_path / str(key), key)
        found = [f.rule for f in check_dir(root) if f.rule == "HW307"]
        assert bool(found) is reported, key


def test_hw322_names_the_key_and_the_hidden_field(check_dir: CheckDir) -> None:
    root = FIXTURES / "HW322-system-ignore-hides-rollout" / "found"
    (finding,) = [f for f in check_dir(root) if f.rule == "HW322" and f.line == 8]
    assert finding.file.endswith("argocd/argocd-cm.yaml")
    assert finding.message.startswith(
        "argocd-cm resource.customizations.ignoreDifferences.all ignores "
        "/spec/template/spec/containers/image of every Deployment/StatefulSet/DaemonSet/Rollout:"
    )


@pytest.mark.parametrize(
    ("key", "rule", "reported"),
    [
        ("argoproj.io_Rollout", "jsonPointers: [/spec/strategy/canary/steps]", True),
        ("argoproj.io_Rollout", "jsonPointers: [/spec]", True),
        ("argoproj.io_AnalysisTemplate", "jqPathExpressions: ['.spec.metrics[0].provider']", True),
        ("apps_Deployment", "jsonPointers: [/spec/strategy]", False),  # Kubernetes rolls it
        ("apps_Deployment", "jsonPointers: [/spec/template/metadata/annotations]", False),
        ("argoproj.io_Rollout", "jsonPointers: [/spec/replicas]", False),
        ("Service", "jsonPointers: [/spec]", False),
    ],
)
def test_hw322_what_a_system_rule_may_and_may_not_hide(
    tmp_path: Path, check_dir: CheckDir, key: str, rule: str, reported: bool
) -> None:
    (tmp_path / "argocd-cm.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: argocd-cm\ndata:\n"
        f"  resource.customizations.ignoreDifferences.{key}: |\n    {rule}\n"
    )
    assert bool([f for f in check_dir(tmp_path) if f.rule == "HW322"]) is reported


def test_hw322_names_a_managers_rule_and_an_unread_jq_expression(check_dir: CheckDir) -> None:
    root = FIXTURES / "HW322-system-ignore-hides-rollout" / "found"
    by_line = {f.line: f.message for f in check_dir(root) if f.rule == "HW322"}
    assert sorted(by_line) == [8, 12, 16]
    assert by_line[12].startswith(
        "argocd-cm resource.customizations.ignoreDifferences.argoproj.io_Rollout ignores every "
        "field that kubectl-edit owns on every Rollout: once kubectl-edit writes a container image"
    )
    assert by_line[16].startswith(
        "argocd-cm resource.customizations.ignoreDifferences.apps_Deployment ignores what "
        '`.spec.template.spec.containers[] | select(.name == "app") | .image` selects on every '
        "Deployment: it is not a plain path"
    )


@pytest.mark.parametrize(
    ("key", "rule", "reported"),
    [
        ("all", "managedFieldsManagers: [kube-controller-manager]", False),  # Argo CD's docs
        ("argoproj.io_Rollout", "managedFieldsManagers: [rollouts-controller]", False),
        ("apps_Deployment", "managedFieldsManagers: [kubectl-client-side-apply]", True),
        ("all", "managedFieldsManagers: [kube-controller-manager, helm]", True),
        ("apps_*", "managedFieldsManagers: [kubectl-edit]", False),  # Argo CD never finds it
        ("apps_*", "jsonPointers: [/spec/template]", True),  # the glob itself matches
        ("Service", "managedFieldsManagers: [kubectl-edit]", False),  # no image there
        ("argoproj.io_Rollout", "jqPathExpressions: ['.spec | .strategy']", True),
        ("argoproj.io_AnalysisTemplate", "jqPathExpressions: ['.spec.metrics[] | .count']", True),
        ("all", "jqPathExpressions: ['.. | .weight?']", True),  # `..` reaches anything
        ("all", "jqPathExpressions: ['.metadata.labels | del(.team)']", False),
        ("Service", "jqPathExpressions: ['.spec | .image']", False),  # no guarded kind
    ],
)
def test_hw322_managers_and_unread_expressions(
    tmp_path: Path, check_dir: CheckDir, key: str, rule: str, reported: bool
) -> None:
    (tmp_path / "argocd-cm.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: argocd-cm\ndata:\n"
        f"  resource.customizations.ignoreDifferences.{key}: |\n    {rule}\n"
    )
    assert bool([f for f in check_dir(tmp_path) if f.rule == "HW322"]) is reported
