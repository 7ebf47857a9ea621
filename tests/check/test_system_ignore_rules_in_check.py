"""`headway check` reads a repository's argocd-cm system-wide ignore rules as the controller does.

Before: a repository whose argocd-cm ignored a Rollout's `/spec/replicas` for every app was
still told (HW307) to add the rule to each Application, and nothing flagged a system rule that
hid every workload's image.
"""

from __future__ import annotations

import shutil
from pathlib import Path

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
    (finding,) = [f for f in check_dir(root) if f.rule == "HW322"]
    assert finding.file.endswith("argocd/argocd-cm.yaml") and finding.line == 8
    assert finding.message.startswith(
        "argocd-cm resource.customizations.ignoreDifferences.all ignores "
        "/spec/template/spec/containers/image of every Deployment/Rollout/StatefulSet/DaemonSet"
    )
