"""Charts from a real Helm repository on loopback: index, version choice, download, digest,
safe unpacking, basic auth, the persistent chart cache, and rendering like a Git chart."""

from __future__ import annotations

import io
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from headway.source.chart_cache import ChartTree
from headway.source.git import GitCredentials
from headway.source.helm_index import HelmRepositoryError
from headway.source.helm_repo import HelmCharts
from headway.source.render import RenderRequest, choose_renderer, render, render_key
from headway.source.spec import ApplicationSource
from headway.source.tree import FilesystemTree
from source.helm_repo_server import Archive, ChartRepoServer, chart_archive


@pytest.fixture(autouse=True)
def _helm_sdk() -> None:
    from source.gitrepos import require_extra

    require_extra("helm_python", "helm")


@pytest.fixture
def server() -> Iterator[ChartRepoServer]:
    repo = ChartRepoServer()
    for version in ("1.0.0", "1.2.0", "2.0.0", "2.1.0-rc.1"):
        repo.publish(chart_archive("web", version))
    yield repo
    repo.stop()


def _source(url: str, revision: str, **extra: Any) -> ApplicationSource:
    return {"repoURL": url, "chart": "web", "targetRevision": revision, **extra}  # type: ignore[typeddict-item]


def _data(charts: HelmCharts, source: ApplicationSource, **kw: Any) -> dict[str, str]:
    chart = charts.resolve(source)
    request = RenderRequest(source=source, tree=chart.tree, app_name="shop", **kw)
    result = render(request)
    assert result.ok, result.diagnostics
    [doc] = result.documents
    return dict(doc.obj["data"])


@pytest.mark.parametrize(
    ("revision", "chosen"),
    [("1.*", "1.2.0"), (">=1.0.0 <2.0.0", "1.2.0"), ("*", "2.0.0"), ("1.0.0", "1.0.0"),
     ("~1.0", "1.0.0"), (">=2.1.0-rc.0", "2.1.0-rc.1")],
)
def test_the_highest_version_the_revision_allows_is_rendered(
    server: ChartRepoServer, tmp_path: Path, revision: str, chosen: str
) -> None:
    charts = HelmCharts(tmp_path / "charts")
    chart = charts.resolve(_source(server.url, revision))
    assert chart.ref.version == chosen
    assert _data(charts, _source(server.url, revision))["chartVersion"] == chosen


def test_values_and_parameters_apply_as_to_a_git_chart(
    server: ChartRepoServer, tmp_path: Path
) -> None:
    values_dir = tmp_path / "values-repo"
    (values_dir / "prod").mkdir(parents=True)
    (values_dir / "prod" / "web.yaml").write_text("region: us-east-1\nrelease: from-git\n")
    helm = {"valueFiles": ["$values/prod/web.yaml"],
            "parameters": [{"name": "release", "value": "from-parameter"}]}
    charts = HelmCharts(tmp_path / "charts")
    data = _data(charts, _source(server.url, "1.0.0", helm=helm),
                 refs={"values": FilesystemTree(values_dir)})
    assert data == {"release": "from-parameter", "chartVersion": "1.0.0", "region": "us-east-1"}


def test_a_chart_renders_named_by_its_archive_path(server: ChartRepoServer, tmp_path: Path) -> None:
    charts = HelmCharts(tmp_path / "charts")
    source = _source(server.url, "1.0.0")
    result = render(RenderRequest(source=source, tree=charts.resolve(source).tree, app_name="a"))
    assert [d.file for d in result.documents] == ["web/templates/configmap.yaml"]


def test_a_new_matching_version_is_noticed_once_the_index_is_read_again(
    server: ChartRepoServer, tmp_path: Path
) -> None:
    charts = HelmCharts(tmp_path / "charts")
    source = _source(server.url, "1.*")
    key_before = render_key(choose_renderer(_request(charts, source)), _request(charts, source))
    server.publish(chart_archive("web", "1.3.0"))
    assert charts.resolve(source).ref.version == "1.2.0"  # the index is kept until forgotten
    charts.forget_index(server.url)
    assert charts.resolve(source).ref.version == "1.3.0"
    key_after = render_key(choose_renderer(_request(charts, source)), _request(charts, source))
    assert key_before != key_after and "1.3.0" in key_after


def _request(charts: HelmCharts, source: ApplicationSource) -> RenderRequest:
    return RenderRequest(source=source, tree=charts.resolve(source).tree, app_name="shop")


def test_a_republished_archive_with_a_new_digest_is_a_new_cache_key(
    server: ChartRepoServer, tmp_path: Path
) -> None:
    charts = HelmCharts(tmp_path / "charts")
    source = _source(server.url, "1.0.0")
    first = charts.resolve(source)
    server.entries["web"] = [e for e in server.entries["web"] if e["version"] != "1.0.0"]
    server.publish(chart_archive("web", "1.0.0", values={"release": "again", "region": "x"}))
    charts.forget_index(server.url)
    second = charts.resolve(source)
    assert first.ref.digest != second.ref.digest
    assert _data(charts, source)["release"] == "again"


def test_archive_urls_may_be_absolute(server: ChartRepoServer, tmp_path: Path) -> None:
    archive = chart_archive("web", "3.0.0")
    server.publish(archive, path="elsewhere/web-3.0.0.tgz",
                   url=server.url + "/elsewhere/web-3.0.0.tgz")
    charts = HelmCharts(tmp_path / "charts")
    assert charts.resolve(_source(server.url, "3.0.0")).ref.version == "3.0.0"
    assert ("/charts/elsewhere/web-3.0.0.tgz", "") in server.requests


def test_an_archive_that_does_not_match_the_index_digest_is_refused(
    server: ChartRepoServer, tmp_path: Path
) -> None:
    server.publish(chart_archive("web", "3.0.0"), digest="0" * 64)
    charts = HelmCharts(tmp_path / "charts")
    with pytest.raises(HelmRepositoryError, match=r"sha256 is [0-9a-f]{64}, the index says 0{64}"):
        charts.resolve(_source(server.url, "3.0.0"))
    assert charts.cache.latest(server.url, "web", "3.0.0") is None


def test_an_index_without_digests_still_serves_charts(tmp_path: Path) -> None:
    repo = ChartRepoServer()
    try:
        repo.publish(chart_archive("web", "1.0.0"), digest="")
        chart = HelmCharts(tmp_path / "charts").resolve(_source(repo.url, "1.0.0"))
        assert chart.ref.digest == "" and "sha256:none" in chart.ref.identity
    finally:
        repo.stop()


def _hostile(member: tarfile.TarInfo, content: bytes = b"x") -> Archive:
    good = chart_archive("web", "6.6.6").data
    buffer = io.BytesIO()
    with tarfile.open(fileobj=io.BytesIO(good), mode="r:gz") as source, tarfile.open(
        fileobj=buffer, mode="w:gz"
    ) as out:
        for info in source.getmembers():
            out.addfile(info, source.extractfile(info))
        out.addfile(member, io.BytesIO(content) if member.isfile() else None)
    return Archive("web", "6.6.6", buffer.getvalue())


def _link(name: str, target: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = tarfile.SYMTYPE, target
    return info


def _file(name: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size = 1
    return info


@pytest.mark.parametrize(
    ("member", "message"),
    [(_file("../escaped.yaml"), "leaves the chart directory"),
     (_file("/etc/owned.yaml"), "leaves the chart directory"),
     (_file("web/../../escaped.yaml"), "leaves the chart directory"),
     (_link("web/templates/passwd.yaml", "/etc/passwd"), "is a link"),
     (_link("web/templates/up.yaml", "../../../../secret"), "is a link")],
)
def test_hostile_archives_are_refused_and_write_nothing_outside(
    server: ChartRepoServer, tmp_path: Path, member: tarfile.TarInfo, message: str
) -> None:
    server.publish(_hostile(member))
    charts = HelmCharts(tmp_path / "cache" / "charts")
    with pytest.raises(HelmRepositoryError, match=message):
        charts.resolve(_source(server.url, "6.6.6"))
    written = {p.name for p in tmp_path.rglob("*")}
    assert not written & {"escaped.yaml", "owned.yaml", "passwd.yaml", "up.yaml"}
    assert charts.cache.latest(server.url, "web", "6.6.6") is None


def test_a_fetched_version_renders_with_the_repository_down(
    server: ChartRepoServer, tmp_path: Path
) -> None:
    HelmCharts(tmp_path / "charts").resolve(_source(server.url, "1.0.0"))
    server.stop()
    restarted = HelmCharts(tmp_path / "charts")  # a new process: the cache is on disk
    assert _data(restarted, _source(server.url, "1.0.0"))["chartVersion"] == "1.0.0"
    for revision in ("1.*", "1.2.0"):  # a constraint needs the index; 1.2.0 was never fetched
        with pytest.raises(HelmRepositoryError) as caught:
            restarted.resolve(_source(server.url, revision))
        assert f"chart 'web' from Helm repository {server.url}: cannot reach" in str(caught.value)


def test_basic_auth_from_credentials_and_never_in_errors(tmp_path: Path) -> None:
    repo = ChartRepoServer(username="ci", password="s3cret-token")
    try:
        repo.publish(chart_archive("web", "1.0.0"))
        good = GitCredentials(username="ci", password="s3cret-token")
        charts = HelmCharts(tmp_path / "a", credentials_for=lambda url: good)
        assert charts.resolve(_source(repo.url, "1.0.0")).ref.version == "1.0.0"
        bad = GitCredentials(username="ci", password="wrong-token")
        for credentials in (bad, None):
            refused = HelmCharts(tmp_path / "b", credentials_for=lambda url, c=credentials: c)
            with pytest.raises(HelmRepositoryError) as caught:
                refused.resolve(_source(repo.url, "1.0.0"))
            text = str(caught.value)
            assert "HTTP 401" in text and "chart 'web'" in text and repo.url in text
            assert "token" not in text
    finally:
        repo.stop()


def test_credentials_go_to_another_host_only_with_pass_credentials(tmp_path: Path) -> None:
    charts_host, archive_host = ChartRepoServer(), ChartRepoServer()
    try:
        archive = chart_archive("web", "1.0.0")
        archive_host.publish(archive)
        other = archive_host.url.replace("127.0.0.1", "localhost") + "/web-1.0.0.tgz"
        charts_host.publish(archive, url=other)
        creds = GitCredentials(username="ci", password="pw")
        for passing, cache in ((False, "a"), (True, "b")):
            charts = HelmCharts(tmp_path / cache, credentials_for=lambda url: creds)
            charts.resolve(_source(charts_host.url, "1.0.0", helm={"passCredentials": passing}))
            sent = archive_host.requests[-1][1]
            assert bool(sent) is passing
        assert all(header for _path, header in charts_host.requests)
    finally:
        charts_host.stop()
        archive_host.stop()


def test_unknown_chart_version_and_bad_revision_name_the_chart(
    server: ChartRepoServer, tmp_path: Path
) -> None:
    charts = HelmCharts(tmp_path / "charts")
    cases = [("9.9.9", "version '9.9.9' is not in the index"),
             ("9.*", "no version satisfies '9.*'"), ("main", "neither a chart version"),
             ("", "targetRevision is required")]
    for revision, message in cases:
        with pytest.raises(HelmRepositoryError, match=message):
            charts.resolve(_source(server.url, revision))
    with pytest.raises(HelmRepositoryError, match="no such chart"):
        charts.resolve({"repoURL": server.url, "chart": "nope", "targetRevision": "1.0.0"})


def test_the_index_is_read_once_until_forgotten(server: ChartRepoServer, tmp_path: Path) -> None:
    charts = HelmCharts(tmp_path / "charts")
    for revision in ("1.*", "1.0.0", "*"):
        charts.resolve(_source(server.url, revision))
    assert charts.index_reads == 1
    charts.forget_index(server.url)
    charts.resolve(_source(server.url, "1.*"))
    assert charts.index_reads == 2 and charts.downloads == 3


def test_a_chart_tree_identity_is_repository_chart_version_and_digest(
    server: ChartRepoServer, tmp_path: Path
) -> None:
    chart = HelmCharts(tmp_path / "charts").resolve(_source(server.url, "1.0.0"))
    assert isinstance(chart.tree, ChartTree)
    assert chart.tree.object_id("") == chart.ref.identity
    assert chart.ref.identity == f"helm:{server.url} web 1.0.0 sha256:{chart.ref.digest}"


def test_an_index_is_loaded_once_for_every_chart_and_revision_in_it(
    server: ChartRepoServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A large index (megabytes of YAML) is parsed once per read, not once per app."""
    from headway.source import helm_repo

    server.publish(chart_archive("api", "1.0.0"))
    loads: list[str] = []
    real = helm_repo.load_entries

    def counting(text: bytes, *, url: str, chart: str) -> Any:
        loads.append(chart)
        return real(text, url=url, chart=chart)

    monkeypatch.setattr(helm_repo, "load_entries", counting)
    charts = HelmCharts(tmp_path / "charts")
    for chart, revision in (("web", "1.*"), ("web", "*"), ("api", "1.0.0")):
        charts.resolve({"repoURL": server.url, "chart": chart, "targetRevision": revision})
    assert len(loads) == 1
    charts.forget_index(server.url)
    charts.resolve({"repoURL": server.url, "chart": "api", "targetRevision": "*"})
    assert len(loads) == 2


def test_dependencies_packaged_in_the_archive_render(
    server: ChartRepoServer, tmp_path: Path
) -> None:
    """Published charts carry their dependencies as archives in `charts/` (what
    `helm package` after `helm dependency build` writes); nothing more is downloaded."""
    import yaml

    sub = chart_archive("sub", "0.1.0", values={"release": "sub", "region": "r"})
    meta = {"apiVersion": "v2", "name": "web", "version": "5.0.0", "dependencies": [
        {"name": "sub", "version": "0.1.0", "repository": "https://charts.example.com"}]}
    server.publish(chart_archive("web", "5.0.0", extra={
        "web/Chart.yaml": yaml.safe_dump(meta).encode(), "web/charts/sub-0.1.0.tgz": sub.data}))
    charts = HelmCharts(tmp_path / "charts")
    source = _source(server.url, "5.0.0")
    result = render(RenderRequest(source=source, tree=charts.resolve(source).tree, app_name="a"))
    assert result.ok, result.diagnostics
    assert [d.file for d in result.documents] == [
        "web/charts/sub/templates/configmap.yaml", "web/templates/configmap.yaml"]
    assert len(server.requests) == 2  # the index and the archive


def test_storing_a_chart_again_leaves_the_stored_copy_in_place(
    server: ChartRepoServer, tmp_path: Path
) -> None:
    """Two processes (the controller, `headway app diff`) may download the same version at
    once; the second store must not pull the files from under a render reading the first."""
    charts = HelmCharts(tmp_path / "charts")
    first = charts.resolve(_source(server.url, "1.0.0"))
    reading = first.tree.files()
    again = charts.cache.store(first.ref, server.files["web-1.0.0.tgz"])
    assert again.tree.files() == reading
    assert (first.tree._root / "Chart.yaml").stat().st_ino == (
        again.tree._root / "Chart.yaml"
    ).stat().st_ino  # the same files, not a fresh copy renamed over them
    damaged = charts.cache._entry_dir(first.ref) / "entry.json"
    damaged.write_text("{")  # a damaged entry is replaced
    assert charts.cache.store(first.ref, server.files["web-1.0.0.tgz"]).ref == first.ref
