"""The install manifests rendered both ways: `kubectl kustomize deploy/` and the Helm chart
through Headway's own Helm renderer (what an Application pointing at the chart would sync)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from headway.source.render import RenderRequest, render
from headway.source.tree import FilesystemTree
from kubeapi.conftest import kubectl_binary

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
CHART = "deploy/helm/headway"

# What Helm adds to every object and Kustomize does not: release bookkeeping only.
HELM_ONLY_LABELS = ("app.kubernetes.io/instance", "app.kubernetes.io/managed-by", "helm.sh/chart")


def kustomize(path: Path = DEPLOY) -> list[dict[str, Any]]:
    done = subprocess.run([kubectl_binary(), "kustomize", str(path)], capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return [doc for doc in yaml.safe_load_all(done.stdout) if doc]


def helm(values: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    source: dict[str, Any] = {"repoURL": "https://example.invalid/headway.git", "path": CHART,
                              "targetRevision": "HEAD"}
    if values is not None:
        source["helm"] = {"valuesObject": values}
    result = render(RenderRequest(source=source, tree=FilesystemTree(REPO), app_name="headway",
                                  namespace="argocd"))
    assert result.ok, result.diagnostics
    return [doc.obj for doc in result.documents]


@pytest.fixture(scope="module")
def kustomized() -> list[dict[str, Any]]:
    return kustomize()


@pytest.fixture(scope="module")
def helmed() -> list[dict[str, Any]]:
    return helm()


def by_kind(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == kind]
