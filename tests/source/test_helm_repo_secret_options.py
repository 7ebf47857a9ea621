"""What a `type: helm` repository Secret says besides username and password: `enableOCI`,
`insecureOCIForceHttp`, a TLS client certificate, and the fields Headway refuses by name."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from headway.controllers.repo_credentials import tls_host
from headway.source.helm_index import HelmRepositoryError
from headway.source.helm_oci import oci_chart
from headway.source.helm_repo import HelmCharts
from headway.source.repo_credentials import HelmRepoOptions, build_index
from source.helm_repo_server import chart_archive, tls_text
from source.oci_registry_server import OciRegistryServer

CERT, KEY = tls_text("client.pem"), tls_text("client.key")


def helm_secret(name: str, kind: str = "repository", **fields: str) -> dict[str, Any]:
    labels = {"argocd.argoproj.io/secret-type": kind}
    data = {k: base64.b64encode(v.encode()).decode() for k, v in {"type": "helm", **fields}.items()}
    meta = {"name": name, "namespace": "argocd", "labels": labels}
    return {"apiVersion": "v1", "kind": "Secret", "metadata": meta, "data": data}


def test_oci_flags_are_read_from_the_repository_and_its_template() -> None:
    index = build_index([
        helm_secret("registry", url="registry.example.com/charts", enableOCI="true"),
        helm_secret("lab", "repo-creds", url="https://lab.example.com", insecureOCIForceHttp="1"),
        helm_secret("lab-app", url="https://lab.example.com/app", enableOCI="true"),
    ])
    assert index.helm_options("registry.example.com/charts") == HelmRepoOptions(enable_oci=True)
    assert index.helm_options("https://lab.example.com/app") == HelmRepoOptions(
        enable_oci=True, oci_plain_http=True
    )
    assert index.helm_options("https://elsewhere.example.com") == HelmRepoOptions()
    assert index.problems == ()


def test_a_client_certificate_comes_with_the_credentials_and_a_template_lends_it() -> None:
    index = build_index([
        helm_secret("corp", "repo-creds", url="https://charts.corp.example",
                    tlsClientCertData=CERT, tlsClientCertKey=KEY),
        helm_secret("corp-web", url="https://charts.corp.example/web", insecure="true"),
    ])
    found = index.for_url("https://charts.corp.example/web", repo_type="helm")
    assert found is not None
    assert (found.tls_client_cert, found.tls_client_key) == (CERT, KEY)
    assert found.insecure_skip_tls_verify is True
    assert KEY not in repr(found) and CERT not in repr(found)
    git = build_index([helm_secret("g", url="https://g.example", tlsClientCertData=CERT,
                                   tlsClientCertKey=KEY, type="git")])
    assert git.for_url("https://g.example") is None  # Git remotes do not read the pair


@pytest.mark.parametrize(
    ("fields", "field", "reason"),
    [
        ({"tlsClientCertData": CERT}, "tlsClientCertKey", "is required with the other half"),
        ({"tlsClientCertKey": KEY}, "tlsClientCertData", "is required with the other half"),
        ({"tlsClientCertData": KEY, "tlsClientCertKey": KEY}, "tlsClientCertData", "PEM"),
        ({"tlsClientCertData": CERT, "tlsClientCertKey": CERT}, "tlsClientCertKey", "PEM"),
        ({"enableOCI": "yes"}, "enableOCI", 'must be "true" or "false"'),
        ({"insecureOCIForceHttp": "on"}, "insecureOCIForceHttp", 'must be "true" or "false"'),
    ],
)
def test_a_malformed_option_names_the_secret_and_field_never_the_value(
    fields: dict[str, str], field: str, reason: str
) -> None:
    index = build_index([helm_secret("charts", url="https://charts.example", **fields)])
    [problem] = index.problems
    text = str(problem)
    assert text.startswith(f"Secret argocd/charts: field '{field}'") and reason in text
    assert KEY.splitlines()[1] not in text and CERT.splitlines()[1] not in text


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"proxy": "http://proxy.corp:3128"}, "proxy"),
        ({"noProxy": ".corp"}, "noProxy"),
        ({"useAzureWorkloadIdentity": "true"}, "useAzureWorkloadIdentity"),
    ],
)
def test_fields_headway_cannot_honour_are_refused_by_name(
    fields: dict[str, str], named: str
) -> None:
    index = build_index([helm_secret("charts", url="https://charts.example", **fields)])
    refused = index.helm_options("https://charts.example/").refused
    expected = f"repository Secret argocd/charts: {named} is not supported by Headway for charts"
    assert refused == expected
    assert "proxy.corp" not in refused


def test_an_azure_flag_that_is_off_is_not_refused() -> None:
    index = build_index([
        helm_secret("charts", url="https://charts.example", useAzureWorkloadIdentity="false")
    ])
    assert index.helm_options("https://charts.example").refused == ""


def test_where_an_oci_repository_is_asked() -> None:
    assert oci_chart("registry.lab/charts", "web").base == "https://registry.lab"
    assert oci_chart("registry.lab/charts", "web", plain_http=True).base == "http://registry.lab"
    with_scheme = oci_chart("https://registry.lab/charts", "web")  # enableOCI with a scheme
    assert (with_scheme.base, with_scheme.repository) == ("https://registry.lab", "charts/web")


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("https://charts.example.com:8443/stable", "charts.example.com"),
        ("registry.example.com/charts", "registry.example.com"),
        ("oci://Registry.example.com:5000/charts", "registry.example.com"),
        ("https://user@charts.example.com", "charts.example.com"),
    ],
)
def test_the_ca_config_map_is_keyed_by_host_name(url: str, host: str) -> None:
    assert tls_host(url) == host


@pytest.mark.parametrize("enable_oci", [False, True])
def test_enable_oci_reads_a_repository_url_with_a_scheme_as_a_registry(
    tmp_path: Path, enable_oci: bool
) -> None:
    from source.gitrepos import require_extra

    require_extra("helm_python", "helm")
    registry = OciRegistryServer()
    try:
        registry.push(chart_archive("web", "1.0.0"))
        url = f"http://{registry.host}/charts"  # as a Secret with enableOCI may write it
        charts = HelmCharts(
            tmp_path / "charts", options_for=lambda u: HelmRepoOptions(enable_oci=enable_oci)
        )
        source = {"repoURL": url, "chart": "web", "targetRevision": "1.0.0"}
        if enable_oci:
            assert charts.resolve(source).ref.version == "1.0.0"
            assert any(p.startswith("/v2/charts/web/manifests/") for p, _ in registry.requests)
        else:  # read as an index.yaml repository, which a registry is not
            with pytest.raises(HelmRepositoryError, match=r"index\.yaml"):
                charts.resolve(source)
    finally:
        registry.stop()
