"""`headway cluster add|list|rm` on the local store: a kubeconfig context becomes an Argo CD
cluster Secret (files inlined), listed without credentials, refused twice, removed."""

from __future__ import annotations

import base64
from pathlib import Path

import yaml
from typer.testing import CliRunner

from headway.cli.main import app
from headway.clock import SystemClock
from headway.cluster.cluster_secrets import parse_cluster_secret
from headway.cluster.local import LocalCluster

TOKEN = "cli-token-never-printed"
CA_PEM = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


def _kubeconfig(tmp_path: Path) -> Path:
    (tmp_path / "ca.crt").write_bytes(CA_PEM)
    config = {
        "apiVersion": "v1", "kind": "Config", "current-context": "prod",
        "clusters": [{"name": "prod-cluster", "cluster": {
            "server": "https://prod.example.com:6443", "certificate-authority": "ca.crt"}}],
        "users": [{"name": "prod-user", "user": {"token": TOKEN}}],
        "contexts": [{"name": "prod", "context": {"cluster": "prod-cluster",
                                                  "user": "prod-user"}}],
    }
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(config))
    return path


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def test_add_list_and_remove_a_cluster(tmp_path: Path) -> None:
    state = str(tmp_path / "state")
    config = str(_kubeconfig(tmp_path))
    code, out = _run("cluster", "add", "prod", "--from-kubeconfig", config, "--namespace", "shop",
                     "--state-dir", state)
    assert (code, out) == (0, "cluster prod (https://prod.example.com:6443) added: Secret "
                              "argocd/cluster-prod\n")
    with LocalCluster(tmp_path / "state" / "cluster.db", SystemClock()) as store:
        parsed = parse_cluster_secret(store.get("v1", "Secret", "cluster-prod", "argocd"))
    assert parsed.credentials.bearer_token == TOKEN
    assert base64.b64decode(parsed.credentials.tls.ca_data) == CA_PEM  # the file, inlined
    assert parsed.namespaces == ("shop",)

    code, out = _run("cluster", "list", "--state-dir", state)
    assert code == 0 and TOKEN not in out
    assert out.splitlines()[1:] == [
        "in-cluster  https://kubernetes.default.svc  (all)       (serve's own)  -",
        "prod        https://prod.example.com:6443   shop        token          cluster-prod",
    ]
    code, out = _run("cluster", "add", "prod", "--from-kubeconfig", config, "--state-dir", state)
    assert code == 1 and "is registered already (Secret cluster-prod); --upsert" in out

    code, out = _run("cluster", "rm", "https://prod.example.com:6443/", "--state-dir", state)
    assert code == 0 and "Secret argocd/cluster-prod deleted" in out
    code, out = _run("cluster", "rm", "in-cluster", "--state-dir", state)
    assert code == 1 and "in-cluster is Headway's own cluster and has no Secret" in out


def test_a_context_that_is_not_in_the_kubeconfig_is_one_line(tmp_path: Path) -> None:
    code, out = _run("cluster", "add", "staging", "--from-kubeconfig",
                     str(_kubeconfig(tmp_path)), "--state-dir", str(tmp_path / "state"))
    assert code == 1
    assert out == f"error: kubeconfig {tmp_path / 'kubeconfig'} has no context 'staging'\n"
