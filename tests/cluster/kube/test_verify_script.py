"""`scripts/verify-on-cluster`: its arguments, and its CRD step against a Kubernetes API
(here the local runtime's, through the real kubectl): the CRDs Headway reads are installed
when absent and left alone when present. The other steps need a real cluster."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from headway.clock import SystemClock
from headway.cluster.local import LocalCluster
from kubeapi.conftest import kubectl_binary

SCRIPT = Path(__file__).parents[3] / "scripts" / "verify-on-cluster"


def _run(*args: str, kubectl: str | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if kubectl:
        env["PATH"] = f"{Path(kubectl).parent}:{env['PATH']}"
    return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, timeout=300,
                          check=False, env=env)


def test_without_a_kubeconfig_it_says_what_it_needs() -> None:
    done = _run()
    assert (done.returncode, done.stderr.strip()) == (
        2, "verify-on-cluster: --kubeconfig FILE is required")


@pytest.fixture
def kubectl() -> Iterator[str]:
    yield kubectl_binary()


def test_the_crd_step_installs_what_is_missing_and_keeps_what_is_there(
    api: tuple[Path, Path], kubectl: str
) -> None:
    config, db = api
    first = _run("--kubeconfig", str(config), "--only", "crds", kubectl=kubectl)
    assert first.returncode == 0, first.stdout + first.stderr
    with LocalCluster(db, SystemClock()) as store:
        crds = {c["metadata"]["name"] for c in store.list(
            "apiextensions.k8s.io/v1", "CustomResourceDefinition")}
        kinds = {(k.api_version, k.kind) for k in store.discovery()}
    assert {"rollouts.argoproj.io", "analysisruns.argoproj.io", "applications.argoproj.io",
            "virtualservices.networking.istio.io"} <= crds
    assert ("argoproj.io/v1alpha1", "Rollout") in kinds
    again = _run("--kubeconfig", str(config), "--only", "crds", kubectl=kubectl)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "present: rollouts.argoproj.io" in again.stdout
