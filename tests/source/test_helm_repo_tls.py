"""Charts from an HTTPS Helm repository (a real TLS server on loopback, signed by a test CA):
the CA `argocd-tls-certs-cm` gives, `insecure`, a client certificate the server demands,
and the options of a `type: helm` Secret that Headway refuses by name."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from headway.source.git import GitCredentials
from headway.source.helm_index import HelmRepositoryError
from headway.source.helm_repo import HelmCharts
from headway.source.repo_credentials import HelmRepoOptions
from source.helm_repo_server import ChartRepoServer, chart_archive, tls_text


@pytest.fixture(autouse=True)
def _helm_sdk() -> None:
    from source.gitrepos import require_extra

    require_extra("helm_python", "helm")


@pytest.fixture
def https() -> Iterator[ChartRepoServer]:
    server = ChartRepoServer(tls=True)
    server.publish(chart_archive("web", "1.0.0"))
    yield server
    server.stop()


@pytest.fixture
def mutual() -> Iterator[ChartRepoServer]:
    server = ChartRepoServer(tls=True, client_certificate=True)
    server.publish(chart_archive("web", "1.0.0"))
    yield server
    server.stop()


def _source(url: str) -> dict[str, Any]:
    return {"repoURL": url, "chart": "web", "targetRevision": "1.0.0"}


def _trusting(ca: str | None) -> HelmRepoOptions:
    return HelmRepoOptions(ca_data=ca)


CLIENT = GitCredentials(
    tls_client_cert=tls_text("client.pem"), tls_client_key=tls_text("client.key")
)


def test_a_server_signed_by_an_unknown_ca_is_refused(
    https: ChartRepoServer, tmp_path: Path
) -> None:
    charts = HelmCharts(tmp_path / "charts")
    with pytest.raises(HelmRepositoryError) as caught:
        charts.resolve(_source(https.url))
    assert "CERTIFICATE_VERIFY_FAILED" in str(caught.value) and "chart 'web'" in str(caught.value)
    assert https.requests == []  # no request got through the handshake


def test_the_ca_of_argocd_tls_certs_cm_is_trusted(https: ChartRepoServer, tmp_path: Path) -> None:
    ca = tls_text("ca.pem")
    charts = HelmCharts(tmp_path / "charts", options_for=lambda url: _trusting(ca))
    assert charts.resolve(_source(https.url)).ref.version == "1.0.0"
    assert [path for path, _ in https.requests] == ["/charts/index.yaml", "/charts/web-1.0.0.tgz"]


def test_a_configured_ca_keeps_the_systems_cas_trusted(
    https: ChartRepoServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Argo CD trusts only the `argocd-tls-certs-cm` certificates for the host; Headway keeps
    the system's too. The test CA stands in for the system's (OpenSSL reads SSL_CERT_FILE),
    and the configured "CA" is an unrelated certificate: trusting only it would refuse the
    server."""
    ca_file = tmp_path / "system-ca.pem"
    ca_file.write_text(tls_text("ca.pem"), encoding="utf-8")
    monkeypatch.setenv("SSL_CERT_FILE", str(ca_file))
    unrelated = tls_text("client.pem")
    charts = HelmCharts(tmp_path / "charts", options_for=lambda url: _trusting(unrelated))
    assert charts.resolve(_source(https.url)).ref.version == "1.0.0"


def test_insecure_skips_verification(https: ChartRepoServer, tmp_path: Path) -> None:
    insecure = GitCredentials(insecure_skip_tls_verify=True)
    charts = HelmCharts(tmp_path / "charts", credentials_for=lambda url: insecure)
    assert charts.resolve(_source(https.url)).ref.version == "1.0.0"


@pytest.mark.parametrize("with_certificate", [False, True])
def test_a_client_certificate_is_presented_to_a_server_that_demands_one(
    mutual: ChartRepoServer, tmp_path: Path, with_certificate: bool
) -> None:
    charts = HelmCharts(
        tmp_path / "charts",
        credentials_for=lambda url: CLIENT if with_certificate else None,
        options_for=lambda url: _trusting(tls_text("ca.pem")),
    )
    if with_certificate:
        assert charts.resolve(_source(mutual.url)).ref.version == "1.0.0"
        return
    with pytest.raises(HelmRepositoryError) as caught:
        charts.resolve(_source(mutual.url))
    assert "cannot reach" in str(caught.value) and mutual.requests == []


def test_an_unusable_client_key_is_an_error_without_the_key(
    mutual: ChartRepoServer, tmp_path: Path
) -> None:
    key = tls_text("server.key")  # a key, but not the certificate's
    wrong = GitCredentials(tls_client_cert=tls_text("client.pem"), tls_client_key=key)
    charts = HelmCharts(
        tmp_path / "charts",
        credentials_for=lambda url: wrong,
        options_for=lambda url: _trusting(tls_text("ca.pem")),
    )
    with pytest.raises(HelmRepositoryError) as caught:
        charts.resolve(_source(mutual.url))
    text = str(caught.value)
    assert "TLS settings cannot be used" in text and "chart 'web'" in text
    assert key.splitlines()[1] not in text


def test_a_refused_secret_field_fails_the_fetch_naming_it(
    https: ChartRepoServer, tmp_path: Path
) -> None:
    refused = HelmRepoOptions(refused="repository Secret argocd/charts: proxy is not supported")
    charts = HelmCharts(tmp_path / "charts", options_for=lambda url: refused)
    with pytest.raises(HelmRepositoryError) as caught:
        charts.resolve(_source(https.url))
    assert "repository Secret argocd/charts: proxy is not supported" in str(caught.value)
    assert https.requests == []
