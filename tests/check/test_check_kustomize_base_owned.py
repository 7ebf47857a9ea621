"""A Kustomize base an Application's overlay reads with `../../base` belongs to that
Application: `headway check` checks its objects as rendered by the overlay, not a second time
as plain manifests that no Application owns.

After christianh814/gitops-examples@54ec4b1 `argo-rollouts/canary`: an Application renders
`overlays/localhost`, whose kustomization names `../../base` (under the deprecated `bases:`)
and adds the Ingress the base's Rollout routes through. Before, the base's Rollout was also
checked as a plain manifest: HW219 (its Ingress "missing"), HW202 and HW103 again, with no
Application named."""

from __future__ import annotations

from pathlib import Path

import pytest

from headway.check.registry import run_checks
from headway.cli.check_loader import RepositoryLoader, normalize_url
from headway.source.tree import FilesystemTree

SELF_URL = "https://github.com/example/rollouts.git"

APPLICATION = f"""apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {{name: canary, namespace: argocd}}
spec:
  project: default
  source: {{repoURL: {SELF_URL}, path: canary/overlays/localhost, targetRevision: main}}
  destination: {{server: https://kubernetes.default.svc, namespace: canary}}
"""

ROLLOUT = """apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: rollouts-demo}
spec:
  replicas: 2
  selector: {matchLabels: {app: rollouts-demo}}
  template:
    metadata: {labels: {app: rollouts-demo}}
    spec:
      containers: [{name: demo, image: argoproj/rollouts-demo:blue}]
  strategy:
    canary:
      canaryService: rollouts-demo-canary
      stableService: rollouts-demo-stable
      trafficRouting:
        nginx: {stableIngress: rollouts-demo-stable}
      steps: [{setWeight: 30}, {pause: {}}, {setWeight: 100}]
"""

SERVICES = "".join(
    f"""---
apiVersion: v1
kind: Service
metadata: {{name: rollouts-demo-{role}}}
spec: {{selector: {{app: rollouts-demo}}, ports: [{{port: 80, targetPort: 8080}}]}}
"""
    for role in ("stable", "canary")
)

INGRESS = """apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: rollouts-demo-stable}
spec:
  rules:
    - http:
        paths:
          - path: /
            pathType: Prefix
            backend: {service: {name: rollouts-demo-stable, port: {number: 80}}}
"""


@pytest.mark.parametrize("field", ["bases", "resources"])
def test_a_base_the_overlay_reads_is_not_a_plain_manifest(tmp_path: Path, field: str) -> None:
    base = tmp_path / "canary" / "base"
    overlay = tmp_path / "canary" / "overlays" / "localhost"
    base.mkdir(parents=True)
    overlay.mkdir(parents=True)
    (tmp_path / "canary-app.yaml").write_text(APPLICATION)
    (base / "kustomization.yaml").write_text("resources: [rollout.yaml, services.yaml]\n")
    (base / "rollout.yaml").write_text(ROLLOUT)
    (base / "services.yaml").write_text(SERVICES)
    (overlay / "kustomization.yaml").write_text(
        f"namespace: canary\n{field}:\n- ../../base\n"
        + ("resources:\n" if field == "bases" else "")
        + "- ingress.yaml\n"
    )
    (overlay / "ingress.yaml").write_text(INGRESS)
    loader = RepositoryLoader(
        tree=FilesystemTree(tmp_path), self_urls=frozenset({normalize_url(SELF_URL)})
    )
    context = loader.load()
    assert [unit.name for unit in context.units] == ["canary"]
    findings = run_checks(context)
    in_base = [(f.rule, f.app) for f in findings if f.file.startswith("canary/base/")]
    assert in_base  # the Application's own findings on the base's Rollout stay
    assert all(app == "canary" for _, app in in_base), in_base
    assert "HW219" not in {rule for rule, _ in in_base}
