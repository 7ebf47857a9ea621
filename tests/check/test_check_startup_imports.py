"""`headway check` in a new process (a pre-commit hook) imports what the repository needs:
the ApplicationSet generators, with the Git cache and the HTTP client their inputs bring, load
only when the repository holds an ApplicationSet; the drill's numerics only when there is a
Rollout to drill, and then without the HTTP client (the drill sends no request); Rich only
for text output (JSON and SARIF are printed without it).
Structural, not timed: each case runs in a fresh interpreter and reads `sys.modules` after the
command (see also tests/test_cli_startup_imports.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

GENERATORS = ("headway.appset.generate", "headway.controllers.appset.inputs", "headway.source.git")
DRILL = ("headway.drill.summary", "numpy")
RICH = ("rich.console", "rich.markup")
HTTP = ("httpx2",)

_PROBE = """
import json, sys
from headway.cli import main
sys.argv = ["headway", *sys.argv[1:]]
code = 0
try:
    main.main()
except SystemExit as exit:
    code = exit.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: "registry.example.com/web:1.0.0"}]
"""

APPLICATION_SET = """apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: shops, namespace: argocd}
spec:
  generators:
    - list: {elements: [{name: eu}, {name: us}]}
  template:
    metadata: {name: "shop-{{name}}"}
    spec:
      project: default
      source: {repoURL: "https://github.com/example/shops.git", path: shop, targetRevision: HEAD}
      destination: {server: "https://kubernetes.default.svc", namespace: "shop-{{name}}"}
"""

ROLLOUT = """apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: web, namespace: shop}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: "registry.example.com/web:1.0.0"}]
  strategy:
    canary:
      canaryService: web-canary
      stableService: web
      steps:
        - setWeight: 25
        - analysis: {templates: [{templateName: web-errors}]}
        - setWeight: 50
---
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {name: web-errors, namespace: shop}
spec:
  metrics:
    - name: errors
      interval: 1m
      count: 3
      successCondition: len(result) > 0 && result[0] < 0.02
      provider:
        prometheus:
          address: http://prometheus:9090
          query: sum(rate(errors{app="web"}[1m]))
"""


def _check_modules(repo: Path, output: str = "json") -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, "check", "-o", output, str(repo)],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ),
        check=False,
    )
    report = json.loads(done.stderr.strip().splitlines()[-1])
    assert report["code"] in (0, 1), done.stdout + done.stderr  # clean, or findings
    modules: list[str] = report["modules"]
    assert "headway.check.registry" in modules  # the rules ran
    return modules


def _repo(root: Path, **files: str) -> Path:
    for name, text in files.items():
        (root / name).write_text(text)
    return root


def test_plain_manifests_load_neither_the_generators_nor_the_drill(tmp_path: Path) -> None:
    modules = _check_modules(_repo(tmp_path, **{"web.yaml": DEPLOYMENT}))
    assert [m for m in GENERATORS + DRILL + RICH if m in modules] == []


def test_text_output_loads_rich(tmp_path: Path) -> None:
    modules = _check_modules(_repo(tmp_path, **{"web.yaml": DEPLOYMENT}), "text")
    assert [m for m in RICH if m not in modules] == []


def test_an_application_set_loads_the_generators(tmp_path: Path) -> None:
    repo = _repo(tmp_path, **{"web.yaml": DEPLOYMENT, "shops.yaml": APPLICATION_SET})
    modules = _check_modules(repo)
    assert [m for m in GENERATORS if m not in modules] == []


def test_a_rollout_is_drilled_without_the_http_client(tmp_path: Path) -> None:
    modules = _check_modules(_repo(tmp_path, **{"web.yaml": ROLLOUT}))
    assert [m for m in DRILL if m not in modules] == []  # the drill ran
    assert [m for m in HTTP if m in modules] == []
