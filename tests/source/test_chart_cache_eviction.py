"""The chart cache is bounded: past `max_bytes` the least recently used charts are removed,
never a version an Application renders, synced or keeps in its history, so the offline
rollback to such a version still renders with the repository down."""

from __future__ import annotations

from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any

import pytest

from headway.controllers.app.charts_in_use import chart_versions_in_use
from headway.source.chart_cache import (
    DEFAULT_MAX_BYTES,
    CacheEntry,
    ChartCache,
    ChartRef,
    ChartVersionKey,
    to_evict,
)
from headway.source.helm_index import HelmRepositoryError
from headway.source.helm_repo import HelmCharts
from headway.source.spec import ApplicationSource
from source.helm_repo_server import ChartRepoServer, chart_archive

URL = "https://charts.example.com"
BLOB = 100_000  # each chart carries this many bytes besides its few small files


def _archive(version: str) -> bytes:
    return chart_archive("web", version, extra={"web/files/blob.bin": b"x" * BLOB}).data


def _ref(version: str) -> ChartRef:
    return ChartRef(URL, "web", version, f"digest-{version}")


def _stored(cache: ChartCache) -> list[str]:
    return sorted(e.version[2] for e in cache.entries())


def _entry(name: str, size: int, used: int) -> CacheEntry:
    return CacheEntry(Path(name), (URL, "web", name), size, used)


def test_the_least_recently_used_go_first_until_the_rest_fit() -> None:
    entries = [_entry("a", 40, 3), _entry("b", 40, 1), _entry("c", 40, 2)]
    assert [e.path.name for e in to_evict(entries, max_bytes=80, keep=())] == ["b"]
    assert [e.path.name for e in to_evict(entries, max_bytes=40, keep=())] == ["b", "c"]
    assert to_evict(entries, max_bytes=120, keep=()) == []


def test_a_kept_version_stays_even_over_the_bound() -> None:
    entries = [_entry("a", 40, 3), _entry("b", 40, 1), _entry("c", 40, 2)]
    kept = {(URL, "web", "b")}
    assert [e.path.name for e in to_evict(entries, max_bytes=40, keep=kept)] == ["c", "a"]
    everything = {(URL, "web", n) for n in "abc"}
    assert to_evict(entries, max_bytes=0, keep=everything) == []


def test_storing_past_the_bound_removes_the_least_recently_used(tmp_path: Path) -> None:
    cache = ChartCache(tmp_path / "charts", max_bytes=int(2.5 * BLOB))
    for version in ("1.0.0", "1.1.0"):
        cache.store(_ref(version), _archive(version))
    assert cache.get(_ref("1.0.0")) is not None  # read again: 1.1.0 is now the least recent
    cache.store(_ref("1.2.0"), _archive("1.2.0"))
    assert _stored(cache) == ["1.0.0", "1.2.0"]
    assert cache.get(_ref("1.1.0")) is None
    assert cache.latest(URL, "web", "1.1.0") is None
    assert not [p for p in (tmp_path / "charts").iterdir() if p.name.startswith(".evicted")]


def test_a_version_applications_pin_is_never_evicted(tmp_path: Path) -> None:
    pinned: set[ChartVersionKey] = {(URL, "web", "1.0.0")}
    cache = ChartCache(tmp_path / "charts", max_bytes=int(1.5 * BLOB), keep=lambda: pinned)
    for version in ("1.0.0", "1.1.0", "1.2.0", "1.3.0"):
        cache.store(_ref(version), _archive(version))
    assert _stored(cache) == ["1.0.0", "1.3.0"]  # the pinned oldest and the one just stored
    found = cache.latest(URL, "web", "1.0.0")
    assert found is not None and found.tree.kind("Chart.yaml") is not None


def test_a_chart_fetched_as_a_dependency_is_never_evicted(
    server: ChartRepoServer, tmp_path: Path
) -> None:
    """A Git chart's Chart.lock names it, and no Application status does: which synced
    revision needs it offline is not known, so it stays."""
    charts = HelmCharts(tmp_path / "charts", max_cache_bytes=BLOB)
    locked = {"repoURL": server.url, "chart": "web", "targetRevision": "1.0.0"}
    charts.resolve_dependency(locked)
    for version in ("1.1.0", "1.2.0", "1.3.0"):
        charts.forget_index(server.url)
        charts.resolve({**locked, "targetRevision": version})
    assert _stored(charts.cache) == ["1.0.0", "1.3.0"]
    assert [e.dependency for e in sorted(charts.cache.entries(), key=lambda e: e.version)] == [
        True,
        False,
    ]


def test_nothing_is_evicted_while_the_pinned_versions_are_unknown(tmp_path: Path) -> None:
    unknown: list[Collection[ChartVersionKey] | None] = [None]
    cache = ChartCache(tmp_path / "charts", max_bytes=int(1.5 * BLOB), keep=lambda: unknown[0])
    for version in ("1.0.0", "1.1.0", "1.2.0"):
        cache.store(_ref(version), _archive(version))
    assert _stored(cache) == ["1.0.0", "1.1.0", "1.2.0"]
    unknown[0] = ()
    assert [p.parent.name for p in cache.evict()] == ["1.0.0", "1.1.0"]
    assert _stored(cache) == ["1.2.0"]


def test_entries_stored_before_sizes_were_recorded_are_measured(tmp_path: Path) -> None:
    cache = ChartCache(tmp_path / "charts", max_bytes=10 * BLOB)
    cache.store(_ref("1.0.0"), _archive("1.0.0"))
    [entry] = cache.entries()
    marker = entry.path / "entry.json"
    marker.write_text(marker.read_text().replace(f'"bytes": {entry.size}, ', ""))
    [again] = cache.entries()
    assert again.size >= BLOB and again.size == entry.size


def test_a_negative_bound_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="size bound must be >= 0"):
        ChartCache(tmp_path, max_bytes=-1)


@pytest.fixture
def server() -> Iterator[ChartRepoServer]:
    from source.gitrepos import require_extra

    require_extra("helm_python", "helm")
    repo = ChartRepoServer()
    for version in ("1.0.0", "1.1.0", "1.2.0", "1.3.0"):
        repo.publish(chart_archive("web", version, extra={"web/files/blob.bin": b"x" * BLOB}))
    yield repo
    repo.stop()


def _app(url: str, revision: str, history: list[str]) -> dict[str, Any]:
    source = {"repoURL": url, "chart": "web", "targetRevision": revision}
    return {
        "spec": {"source": source},
        "status": {
            "sync": {"status": "Synced", "revision": revision, "comparedTo": {"source": source}},
            "history": [
                {"id": n, "revision": v, "source": {**source, "targetRevision": v}}
                for n, v in enumerate(history)
            ],
        },
    }


def test_the_offline_rollback_to_a_history_version_survives_eviction(
    server: ChartRepoServer, tmp_path: Path
) -> None:
    """An app synced 1.0.0, then 1.1.0; other apps then fetch newer versions, far past the
    bound. With the repository down, the rollback to 1.0.0 (its history) still renders."""
    apps = [_app(server.url, "1.1.0", ["1.0.0", "1.1.0"])]
    charts = HelmCharts(
        tmp_path / "charts", max_cache_bytes=BLOB, in_use=lambda: chart_versions_in_use(apps)
    )

    def source(version: str) -> ApplicationSource:
        return {"repoURL": server.url, "chart": "web", "targetRevision": version}  # type: ignore[typeddict-item]

    for version in ("1.0.0", "1.1.0", "1.2.0", "1.3.0"):
        charts.forget_index(server.url)  # each poll forgets what it resolved
        charts.resolve(source(version))
    assert _stored(charts.cache) == ["1.0.0", "1.1.0", "1.3.0"]  # 1.2.0: used least, unpinned
    server.stop()
    restarted = HelmCharts(tmp_path / "charts")
    assert restarted.resolve(source("1.0.0")).ref.version == "1.0.0"
    with pytest.raises(HelmRepositoryError, match="cannot reach"):
        restarted.resolve(source("1.2.0"))


def test_the_versions_in_use_are_what_apps_render_synced_and_keep_in_history() -> None:
    multi = {
        "spec": {"sources": [
            {"repoURL": "https://a", "chart": "x", "targetRevision": "1.*"},
            {"repoURL": "https://git/repo", "path": "values", "targetRevision": "main"},
        ]},
        "status": {
            "sync": {
                "revisions": ["1.4.0", "abc123"],
                "comparedTo": {"sources": [
                    {"repoURL": "https://a", "chart": "x"}, {"repoURL": "https://git/repo"},
                ]},
            },
            "operationState": {"syncResult": {
                "revisions": ["1.3.0", "abc122"],
                "sources": [{"repoURL": "https://a ", "chart": "x"}, {"repoURL": "r"}],
            }},
            "history": [{"revision": "1.2.0", "source": {"repoURL": "https://a", "chart": "x"}}],
        },
    }
    broken = {"status": {"sync": "not a mapping", "history": "nor this"}}
    assert chart_versions_in_use([multi, broken]) == {
        ("https://a", "x", "1.*"),
        ("https://a", "x", "1.4.0"),
        ("https://a", "x", "1.3.0"),
        ("https://a", "x", "1.2.0"),
    }


def test_the_serve_option_default_is_the_cache_default() -> None:
    from headway.cli.serve import CHART_CACHE_MAX_MIB
    from headway.engine import EngineSettings

    assert CHART_CACHE_MAX_MIB * 1024 * 1024 == DEFAULT_MAX_BYTES
    assert EngineSettings().chart_cache_max_bytes == DEFAULT_MAX_BYTES
    with pytest.raises(ValueError, match="chart_cache_max_bytes must be >= 0"):
        EngineSettings(chart_cache_max_bytes=-1)
