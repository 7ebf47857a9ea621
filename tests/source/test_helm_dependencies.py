"""A chart whose Chart.yaml declares dependencies from a Helm repository (argocd-example-apps'
`helm-dependency`): fetched into charts/ before Helm renders, as Argo CD's `helm dependency
build` does, through the chart cache (offline afterwards for locked versions), with `condition`
and `alias` applied by Helm; a vendored copy is used as it is."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from headway.source.errors import RenderError
from headway.source.helm_repo import HelmCharts
from headway.source.render import RenderRequest, render
from headway.source.tree import FilesystemTree
from source.helm_repo_server import ChartRepoServer, chart_archive

NAMED = """apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-{{ .Chart.Name }}
data:
  chartVersion: {{ .Chart.Version | quote }}
"""


@pytest.fixture(autouse=True)
def _helm_sdk() -> None:
    from source.gitrepos import require_extra

    require_extra("helm_python", "helm")


@pytest.fixture
def server() -> Iterator[ChartRepoServer]:
    repo = ChartRepoServer()
    for version in ("1.2.0", "1.2.3", "1.3.0"):
        repo.publish(chart_archive("kv", version, templates={"configmap.yaml": NAMED}))
    yield repo
    repo.stop()


def _chart(root: Path, dependencies: list[dict[str, Any]], **files: str) -> FilesystemTree:
    chart = {"apiVersion": "v2", "name": "web", "version": "0.1.0", "dependencies": dependencies}
    (root / "web").mkdir(parents=True)
    (root / "web" / "Chart.yaml").write_text(yaml.safe_dump(chart))
    (root / "web" / "values.yaml").write_text("cache:\n  enabled: false\n")
    for name, text in files.items():
        path = root / "web" / name.replace("__", "/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return FilesystemTree(root)


def _rendered(tree: FilesystemTree, charts: HelmCharts | None) -> dict[str, str]:
    source = {"repoURL": "https://git.example/web.git", "path": "web", "targetRevision": "HEAD"}
    fetch = charts.resolve_dependency if charts is not None else None  # as the controller
    result = render(RenderRequest(source=source, tree=tree, app_name="shop", charts=fetch))
    return {d.obj["metadata"]["name"]: d.obj["data"]["chartVersion"] for d in result.documents}


def _two_aliases(url: str) -> list[dict[str, Any]]:
    return [
        {"name": "kv", "version": "~1.2.0", "repository": url, "alias": "sessions"},
        {"name": "kv", "version": "1.3.0", "repository": url, "alias": "cache"},
    ]


def test_a_range_resolves_from_the_index_and_helm_applies_alias_and_condition(
    tmp_path: Path, server: ChartRepoServer
) -> None:
    deps = _two_aliases(server.url)
    deps[1]["condition"] = "cache.enabled"  # false in the chart's values
    tree = _chart(tmp_path / "repo", deps)
    charts = HelmCharts(tmp_path / "cache")
    # ~1.2.0 is the highest 1.2.x: 1.2.3; the cache alias is disabled by its condition.
    assert _rendered(tree, charts) == {"shop-sessions": "1.2.3"}
    assert charts.downloads == 2


def test_the_lock_pins_the_version_and_renders_offline_once_fetched(
    tmp_path: Path, server: ChartRepoServer
) -> None:
    lock = {"dependencies": [{"name": "kv", "repository": server.url, "version": "1.2.0"}]}
    deps = _two_aliases(server.url)[:1]
    tree = _chart(tmp_path / "repo", deps, **{"Chart.lock": yaml.safe_dump(lock)})
    assert _rendered(tree, HelmCharts(tmp_path / "cache")) == {"shop-sessions": "1.2.0"}
    server.stop()  # the repository is gone: a new controller on the same cache still renders
    assert _rendered(tree, HelmCharts(tmp_path / "cache")) == {"shop-sessions": "1.2.0"}
    unlocked = _chart(tmp_path / "other", deps)  # a range needs the index
    with pytest.raises(RenderError, match=r"chart dependency kv: chart 'kv' from Helm repository"):
        _rendered(unlocked, HelmCharts(tmp_path / "cache"))


def test_a_vendored_copy_is_used_and_nothing_is_fetched(
    tmp_path: Path, server: ChartRepoServer
) -> None:
    vendored = chart_archive("kv", "1.2.1", templates={"configmap.yaml": NAMED})
    tree = _chart(tmp_path / "repo", _two_aliases(server.url)[:1])
    (tmp_path / "repo" / "web" / "charts").mkdir()
    (tmp_path / "repo" / "web" / "charts" / "kv-1.2.1.tgz").write_bytes(vendored.data)
    charts = HelmCharts(tmp_path / "cache")
    assert _rendered(tree, charts) == {"shop-sessions": "1.2.1"}
    assert (charts.index_reads, charts.downloads) == (0, 0)


def test_without_a_fetcher_a_missing_dependency_is_an_error_saying_what_to_do(
    tmp_path: Path, server: ChartRepoServer
) -> None:
    tree = _chart(tmp_path / "repo", _two_aliases(server.url)[:1])
    with pytest.raises(RenderError, match="chart dependencies missing from charts/: kv"):
        _rendered(tree, None)


@pytest.mark.parametrize("repository", ["@stable", "alias:stable"])
def test_a_helm_repo_add_name_is_refused_by_name(tmp_path: Path, repository: str) -> None:
    tree = _chart(tmp_path / "repo", [{"name": "kv", "version": "1.2.0", "repository": repository}])
    with pytest.raises(RenderError, match=r"dependencies\[0\] \(kv\): repository .* is a `helm"):
        _rendered(tree, HelmCharts(tmp_path / "cache"))


def test_a_dependency_from_an_oci_registry_is_pulled_with_the_token_flow(tmp_path: Path) -> None:
    from source.oci_registry_server import TOKEN, OciRegistryServer

    registry = OciRegistryServer()
    try:
        for version in ("1.2.0", "1.2.3"):
            registry.push(chart_archive("kv", version, templates={"configmap.yaml": NAMED}))
        deps = [{"name": "kv", "version": "~1.2.0", "repository": registry.url}]
        tree = _chart(tmp_path / "repo", deps)
        assert _rendered(tree, HelmCharts(tmp_path / "cache")) == {"shop-kv": "1.2.3"}
        sent = {path.split("?")[0]: header for path, header in registry.requests}
        assert sent["/v2/charts/kv/tags/list"] == f"Bearer {TOKEN}"
    finally:
        registry.stop()
