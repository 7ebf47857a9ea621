"""`headway check -o json` prints findings in one order whatever Python's hash seed.

One Rollout rendered by several Applications gives findings that differ only in their
Application; the rules collect findings in a set, so their order must come from the sort."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"
URL = "https://github.com/example/order.git"
APPS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot")


def _repository(root: Path) -> None:
    (root / "headway-check.yaml").write_text(f"selfURLs: [{URL}]\n")
    shared = root / "services" / "checkout"
    shared.mkdir(parents=True)
    rollout = FIXTURES / "HW201-canary-without-steps" / "found" / "rollout.yaml"
    (shared / "rollout.yaml").write_text(rollout.read_text())
    (root / "apps").mkdir()
    for name in APPS:
        (root / "apps" / f"{name}.yaml").write_text(
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\n"
            f"metadata: {{name: {name}, namespace: argocd}}\n"
            "spec:\n  project: default\n"
            f"  source: {{repoURL: '{URL}', targetRevision: HEAD, path: services/checkout}}\n"
            f"  destination: {{name: in-cluster, namespace: {name}}}\n"
        )


def _check_json(root: Path, seed: int) -> str:
    env = {**os.environ, "PYTHONHASHSEED": str(seed)}
    done = subprocess.run(
        [sys.executable, "-m", "headway", "check", "-o", "json", str(root)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.stdout, done.stderr
    return done.stdout


def test_findings_that_differ_only_in_their_application_keep_one_order(tmp_path: Path) -> None:
    _repository(tmp_path)
    outputs = {_check_json(tmp_path, seed) for seed in (0, 1, 2, 3, 4)}
    assert len(outputs) == 1
    findings = json.loads(outputs.pop())
    hw201 = [f for f in findings if f["rule"] == "HW201"]
    assert sorted(f["app"] for f in hw201) == [f["app"] for f in hw201]
    assert len({f["app"] for f in hw201}) == len(APPS)
