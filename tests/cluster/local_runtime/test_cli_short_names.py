"""kubectl's short names reach their kinds in `headway get` and `describe`."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from headway.cli.main import _register_all, app
from headway.cli.objects import resolve_kind
from headway.clock import SystemClock
from headway.cluster.local.api.store import LocalCluster

_register_all()
runner = CliRunner()

KUBECTL_SHORT_NAMES = {
    "po": "Pod", "svc": "Service", "deploy": "Deployment", "rs": "ReplicaSet",
    "sts": "StatefulSet", "ds": "DaemonSet", "cj": "CronJob",
    "hpa": "HorizontalPodAutoscaler", "pdb": "PodDisruptionBudget", "ing": "Ingress",
    "netpol": "NetworkPolicy", "pvc": "PersistentVolumeClaim", "pv": "PersistentVolume",
    "sa": "ServiceAccount", "cm": "ConfigMap", "ns": "Namespace", "ep": "Endpoints",
    "ev": "Event", "crd": "CustomResourceDefinition", "ro": "Rollout", "app": "Application",
}


@pytest.mark.parametrize(("short", "kind"), sorted(KUBECTL_SHORT_NAMES.items()))
def test_each_short_name_resolves_to_its_kind(tmp_path: Path, short: str, kind: str) -> None:
    with LocalCluster(tmp_path / "cluster.db", SystemClock()) as cluster:
        assert resolve_kind(cluster, short).kind == kind
        assert resolve_kind(cluster, short.upper()).kind == kind


HPA = """\
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 5
"""


def test_get_and_describe_take_a_short_name(tmp_path: Path) -> None:
    manifest = tmp_path / "hpa.yaml"
    manifest.write_text(HPA)
    state = ["--state-dir", str(tmp_path / "state")]
    assert runner.invoke(app, ["apply", "-f", str(manifest), *state]).exit_code == 0
    listed = runner.invoke(app, ["get", "hpa", *state])
    assert listed.exit_code == 0, listed.output
    assert listed.output.splitlines()[1].split()[0] == "web"
    described = runner.invoke(app, ["describe", "hpa", "web", *state])
    assert described.exit_code == 0, described.output
    assert "HorizontalPodAutoscaler" in described.output


def test_a_crds_short_names_reach_its_kind(tmp_path: Path) -> None:
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "caches.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"kind": "Cache", "plural": "caches", "shortNames": ["kc"]},
                 "versions": [{"name": "v1", "served": True, "storage": True}]},
    }
    with LocalCluster(tmp_path / "cluster.db", SystemClock()) as cluster:
        cluster.apply(crd, field_manager="test")
        assert resolve_kind(cluster, "kc").kind == "Cache"
