"""`headway app diff` for an Application whose chart comes from a private Helm repository:
it reads the `type: helm` repository Secret (and `argocd-tls-certs-cm`) from the store as
the controller does, and the controller's chart cache under the state directory."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from app_harness import APP_API_VERSION, APPS_NS, Harness, config_map, make_harness, manifests
from typer.testing import CliRunner

from headway.cli.main import _register_all, app
from headway.clock import VirtualClock
from headway.source.git import GitCredentials
from headway.source.helm_repo import HelmCharts
from source.helm_repo_server import ChartRepoServer, chart_archive, tls_text

_register_all()
runner = CliRunner()
PASSWORD = "s3cret-chart-token"


@pytest.fixture(autouse=True)
def _helm_sdk() -> None:
    from source.gitrepos import require_extra

    require_extra("helm_python", "helm")


@pytest.fixture
def charts() -> Iterator[ChartRepoServer]:
    server = ChartRepoServer(username="reader", password=PASSWORD)
    server.publish(chart_archive("web", "1.0.0"))
    yield server
    server.stop()


def _helm_secret(url: str, *, password: str, **more: str) -> dict[str, Any]:
    fields = {"type": "helm", "url": url, "username": "reader", "password": password, **more}
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": "charts",
            "namespace": APPS_NS,
            "labels": {"argocd.argoproj.io/secret-type": "repository"},
        },
        "data": {k: base64.b64encode(v.encode()).decode() for k, v in fields.items()},
    }


def _chart_app(url: str) -> dict[str, Any]:
    return {
        "apiVersion": APP_API_VERSION,
        "kind": "Application",
        "metadata": {"name": "web", "namespace": APPS_NS},
        "spec": {
            "project": "default",
            "source": {"repoURL": url, "chart": "web", "targetRevision": "1.0.0"},
            "destination": {"server": "https://kubernetes.default.svc", "namespace": "demo"},
        },
    }


def _diff(tmp_path: Path) -> tuple[int, str, str]:
    state = str(tmp_path / "state")
    result = runner.invoke(app, ["app", "diff", "web", "--state-dir", state])
    return result.exit_code, result.stdout, result.stderr


def _harness(tmp_path: Path, clock: VirtualClock, charts: ChartRepoServer) -> Harness:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("unused"))})
    h.install(_chart_app(charts.url))
    return h


def test_app_diff_fetches_the_chart_with_the_helm_repository_secret(
    tmp_path: Path, clock: VirtualClock, charts: ChartRepoServer
) -> None:
    h = _harness(tmp_path, clock, charts)
    h.install(_helm_secret(charts.url, password=PASSWORD))
    code, out, err = _diff(tmp_path)
    assert (code, err) == (1, "")
    assert "/ConfigMap demo/web-conf" in out and "+  chartVersion: 1.0.0" in out
    assert any(header.startswith("Basic ") for _path, header in charts.requests)


def test_app_diff_with_a_wrong_password_fails_naming_the_chart_never_the_password(
    tmp_path: Path, clock: VirtualClock, charts: ChartRepoServer
) -> None:
    h = _harness(tmp_path, clock, charts)
    h.install(_helm_secret(charts.url, password="wrong-" + PASSWORD))
    code, out, err = _diff(tmp_path)
    assert code == 2 and out == ""
    assert "HTTP 401" in err and "chart 'web'" in err and charts.url in err
    assert PASSWORD not in err


def test_app_diff_renders_a_chart_the_controller_cached_with_the_repository_down(
    tmp_path: Path, clock: VirtualClock, charts: ChartRepoServer
) -> None:
    h = _harness(tmp_path, clock, charts)
    h.install(_helm_secret(charts.url, password=PASSWORD))
    controller_charts = HelmCharts(  # what `serve --state-dir tmp/state` keeps
        tmp_path / "state" / "chart-cache",
        credentials_for=lambda url: GitCredentials(username="reader", password=PASSWORD),
    )
    controller_charts.resolve(_chart_app(charts.url)["spec"]["source"])
    charts.stop()
    code, out, err = _diff(tmp_path)
    assert (code, err) == (1, "")
    assert "+  chartVersion: 1.0.0" in out


@pytest.mark.parametrize("ca_config_map", [True, False])
def test_app_diff_presents_the_client_certificate_and_trusts_the_configured_ca(
    tmp_path: Path, clock: VirtualClock, ca_config_map: bool
) -> None:
    server = ChartRepoServer(
        username="reader", password=PASSWORD, tls=True, client_certificate=True
    )
    try:
        server.publish(chart_archive("web", "1.0.0"))
        h = _harness(tmp_path, clock, server)
        pair = {
            "tlsClientCertData": tls_text("client.pem"),
            "tlsClientCertKey": tls_text("client.key"),
        }
        h.install(_helm_secret(server.url, password=PASSWORD, **pair))
        if ca_config_map:
            h.install({
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "argocd-tls-certs-cm", "namespace": APPS_NS},
                "data": {"127.0.0.1": tls_text("ca.pem")},
            })
        code, out, err = _diff(tmp_path)
    finally:
        server.stop()
    if ca_config_map:
        assert (code, err) == (1, "")
        assert "+  chartVersion: 1.0.0" in out
    else:
        assert code == 2 and "CERTIFICATE_VERIFY_FAILED" in err and "chart 'web'" in err
