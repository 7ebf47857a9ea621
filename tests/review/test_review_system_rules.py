"""`headway diff BASE..HEAD` hides what the repository's argocd-cm ignores system-wide.

Before: the review applied only each Application's `ignoreDifferences`, so a change the
controller would never report (a system rule for `/spec/replicas`) showed as a change.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from headway.cli.main import app as cli
from review.repo import GitopsRepo, application, deployment

ARGOCD_CM = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-cm
  namespace: argocd
data:
  resource.customizations.ignoreDifferences.apps_Deployment: |
    jsonPointers:
    - /spec/replicas
"""


def _changed_resources(root: Path) -> list[tuple[str, str]]:
    result = CliRunner().invoke(cli, ["diff", "HEAD~1..HEAD", "--repo", str(root), "-o", "json"])
    assert result.exit_code in (0, 1), result.output
    document: dict[str, Any] = json.loads(result.output)
    return [(r["kind"], r["change"]) for a in document["apps"] for r in a["resources"]]


def test_a_change_only_to_a_system_ignored_field_shows_no_resource_change(tmp_path: Path) -> None:
    for with_rule in (False, True):
        repo = GitopsRepo(tmp_path / str(with_rule))
        files = {"apps/web.yaml": application("web", path="web"),
                 "web/deploy.yaml": deployment("web", "shop/web:1.0")}  # fmt: skip
        if with_rule:
            files["argocd/argocd-cm.yaml"] = ARGOCD_CM
        repo.commit(files)
        scaled = deployment("web", "shop/web:1.0").replace("replicas: 2", "replicas: 5")
        repo.commit({"web/deploy.yaml": scaled})
        assert _changed_resources(repo.root) == ([] if with_rule else [("Deployment", "changed")])


def test_a_malformed_system_rule_is_named_rather_than_silently_dropped(tmp_path: Path) -> None:
    repo = GitopsRepo(tmp_path)
    broken = ARGOCD_CM.replace("- /spec/replicas", "- spec/replicas")  # not a JSON pointer
    repo.commit({"apps/web.yaml": application("web", path="web"),
                 "web/deploy.yaml": deployment("web", "shop/web:1.0"),
                 "argocd/argocd-cm.yaml": broken})  # fmt: skip
    scaled = deployment("web", "shop/web:1.0").replace("replicas: 2", "replicas: 5")
    repo.commit({"web/deploy.yaml": scaled})
    result = CliRunner().invoke(
        cli, ["diff", "HEAD~1..HEAD", "--repo", str(repo.root), "-o", "json"]
    )
    document: dict[str, Any] = json.loads(result.output)
    (problem,) = [p for p in document["problems"] if "argocd-cm" in p]
    assert "resource.customizations.ignoreDifferences.apps_Deployment" in problem
    assert "spec/replicas" in problem and "leaves the rule out" in problem
    changed = [(r["kind"], r["change"]) for a in document["apps"] for r in a["resources"]]
    assert changed == [("Deployment", "changed")]  # shown, as no rule applies
