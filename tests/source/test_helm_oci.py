"""Charts from an OCI registry (a real one on loopback, with the Bearer token flow): tags as
versions, the manifest's chart layer, its digest checked, credentials to the token service
only, never along a redirect, and the chart cache with the registry down."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from headway.source.git import GitCredentials
from headway.source.helm_index import HelmRepositoryError
from headway.source.helm_oci import BearerChallenge, oci_chart, parse_challenge
from headway.source.helm_repo import HelmCharts
from headway.source.render import RenderRequest, render
from headway.source.spec import ApplicationSource
from source.helm_repo_server import chart_archive
from source.oci_registry_server import TOKEN, OciRegistryServer


@pytest.fixture(autouse=True)
def _helm_sdk() -> None:
    from source.gitrepos import require_extra

    require_extra("helm_python", "helm")


@pytest.fixture
def registry() -> Iterator[OciRegistryServer]:
    server = OciRegistryServer()
    for version in ("1.0.0", "1.2.0", "2.0.0"):
        server.push(chart_archive("web", version))
    yield server
    server.stop()


def _source(url: str, revision: str, **extra: Any) -> ApplicationSource:
    return {"repoURL": url, "chart": "web", "targetRevision": revision, **extra}  # type: ignore[typeddict-item]


def _chart_version(charts: HelmCharts, source: ApplicationSource) -> str:
    chart = charts.resolve(source)
    result = render(RenderRequest(source=source, tree=chart.tree, app_name="shop"))
    assert result.ok, result.diagnostics
    [doc] = result.documents
    return str(doc.obj["data"]["chartVersion"])


@pytest.mark.parametrize(("revision", "chosen"), [("1.*", "1.2.0"), ("*", "2.0.0"),
                                                  ("1.0.0", "1.0.0")])
def test_a_chart_from_an_oci_registry_renders(
    registry: OciRegistryServer, tmp_path: Path, revision: str, chosen: str
) -> None:
    charts = HelmCharts(tmp_path / "charts")
    assert _chart_version(charts, _source(registry.url, revision)) == chosen
    sent = {path.split("?")[0]: header for path, header in registry.requests}
    assert sent["/v2/charts/web/tags/list"] == f"Bearer {TOKEN}"
    assert all(not h for p, h in registry.requests if p.startswith("/storage/"))


def test_an_enable_oci_url_without_a_scheme_is_the_same_chart(
    registry: OciRegistryServer, tmp_path: Path
) -> None:
    charts = HelmCharts(tmp_path / "charts")
    assert _chart_version(charts, _source(f"{registry.host}/charts", "1.0.0")) == "1.0.0"


def test_a_build_suffix_is_read_back_from_the_tag(tmp_path: Path) -> None:
    server = OciRegistryServer()
    try:
        server.push(chart_archive("web", "1.0.0+build.7"))
        assert server.tags["charts/web"] == ["1.0.0_build.7"]
        chart = HelmCharts(tmp_path).resolve(_source(server.url, "1.*"))
        assert chart.ref.version == "1.0.0+build.7"
    finally:
        server.stop()


def test_registry_credentials_go_to_the_token_service_only(tmp_path: Path) -> None:
    server = OciRegistryServer(username="bot", password="p4ss-word")
    try:
        server.push(chart_archive("web", "1.0.0"))
        good = GitCredentials(username="bot", password="p4ss-word")
        charts = HelmCharts(tmp_path / "a", credentials_for=lambda url: good)
        assert charts.resolve(_source(server.url, "1.0.0")).ref.version == "1.0.0"
        storage = [h for p, h in server.requests if p.startswith("/storage/")]
        assert storage == [""]  # the redirect to the blob store carries no credentials
        bad = GitCredentials(username="bot", password="wrong-word")
        refused = HelmCharts(tmp_path / "b", credentials_for=lambda url: bad)
        with pytest.raises(HelmRepositoryError) as caught:
            refused.resolve(_source(server.url, "1.0.0"))
        text = str(caught.value)
        assert "HTTP 401" in text and "chart 'web'" in text and server.url in text
        assert "word" not in text
    finally:
        server.stop()


def test_a_manifest_without_a_chart_layer_is_refused(tmp_path: Path) -> None:
    server = OciRegistryServer()
    try:
        server.push(chart_archive("web", "1.0.0"), layer="application/vnd.oci.image.layer.v1.tar")
        with pytest.raises(HelmRepositoryError, match="no Helm chart layer"):
            HelmCharts(tmp_path).resolve(_source(server.url, "1.0.0"))
    finally:
        server.stop()


def test_a_blob_that_does_not_match_its_digest_is_refused(
    registry: OciRegistryServer, tmp_path: Path
) -> None:
    digest = registry.push(chart_archive("web", "3.0.0"))
    registry.blobs[digest] = chart_archive("web", "3.0.1").data
    with pytest.raises(HelmRepositoryError, match="sha256 is"):
        HelmCharts(tmp_path).resolve(_source(registry.url, "3.0.0"))


def test_a_pulled_version_renders_with_the_registry_down(
    registry: OciRegistryServer, tmp_path: Path
) -> None:
    HelmCharts(tmp_path / "charts").resolve(_source(registry.url, "1.0.0"))
    registry.stop()
    restarted = HelmCharts(tmp_path / "charts")
    assert _chart_version(restarted, _source(registry.url, "1.0.0")) == "1.0.0"
    with pytest.raises(HelmRepositoryError, match="cannot reach"):
        restarted.resolve(_source(registry.url, "1.*"))


def test_where_a_chart_lives_and_what_a_challenge_asks() -> None:
    where = oci_chart("oci://ghcr.io/org/charts", "web")
    assert where.tags_url() == "https://ghcr.io/v2/org/charts/web/tags/list"
    assert where.manifest_url("1.0.0+b1").endswith("/manifests/1.0.0_b1")
    assert oci_chart("oci://localhost:5000", "web").base == "http://localhost:5000"
    header = 'Bearer realm="https://ghcr.io/token",service="ghcr.io",scope="repository:a:pull"'
    assert parse_challenge(header) == BearerChallenge(
        "https://ghcr.io/token", "ghcr.io", "repository:a:pull"
    )
    assert parse_challenge('Basic realm="x"') is None
