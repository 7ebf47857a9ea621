"""The Application and Rollout the HW306 router-weight tests share: the Rollout's
`trafficRouting` block and the router's own objects come from each test (`ROUTING` is
replaced by the block; documents after the first `---` are written beside the Rollout)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from check.conftest import CheckDir

APP = """\
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: web
  namespace: argocd
  finalizers: [resources-finalizer.argocd.argoproj.io]
spec:
  project: workloads
  source: {repoURL: "https://github.com/example/fixtures.git", targetRevision: HEAD, path: web}
  destination: {name: prod, namespace: web}
"""
ROLLOUT = """\
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template: {metadata: {labels: {app: web}}, spec: {containers: [{name: w, image: w}]}}
  strategy:
    canary:
      canaryService: web-canary
      stableService: web
      trafficRouting:
ROUTING
      steps: [{setWeight: 10}, {pause: {duration: 1m}}]
"""


def weight_findings(root: Path, check_dir: CheckDir, routing: str, ignore: str) -> list[str]:
    rollout = ROLLOUT.replace("ROUTING\n", routing.split("---\n", 1)[0])
    objects = "---\n".join([rollout, *routing.split("---\n")[1:]])
    for name, text in {"apps/web.yaml": APP + ignore, "web/all.yaml": objects}.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text))
    return [f.message for f in check_dir(root) if f.rule == "HW306"]
