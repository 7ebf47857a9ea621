"""The chart versions Applications depend on, which the chart cache never evicts: what each
renders now (`status.sync.comparedTo` at `status.sync.revision(s)`), what its last sync applied
(`status.operationState.syncResult`), every `status.history` entry (a rollback target, which
must render with the repository down) and an exact version its spec pins. Purely computational.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from headway.source.chart_cache import ChartVersionKey
from headway.source.helm_repo import chart_source_fields
from headway.source.spec import raw_sources

__all__ = ["chart_versions_in_use"]


def chart_versions_in_use(apps: Iterable[Mapping[str, Any]]) -> frozenset[ChartVersionKey]:
    """(repository URL, chart, version) of every chart source the Applications render, synced
    or keep in their history."""
    found: set[ChartVersionKey] = set()
    for app in apps:
        status = _mapping(app.get("status"))
        sync = _mapping(status.get("sync"))
        found.update(_pinned(_mapping(sync.get("comparedTo")), sync))
        result = _mapping(_mapping(status.get("operationState")).get("syncResult"))
        found.update(_pinned(result, result))
        history = status.get("history")
        for entry in history if isinstance(history, list) else []:
            found.update(_pinned(_mapping(entry), _mapping(entry)))
        for source in raw_sources(app):
            url, chart, target = chart_source_fields(source)
            if chart and target:  # a constraint matches no version: harmless
                found.add((url, chart, target))
    return frozenset(found)


def _pinned(
    sources_from: Mapping[str, Any], revisions_from: Mapping[str, Any]
) -> Iterator[ChartVersionKey]:
    """The chart sources of `sources_from` (`sources`, else `source`) paired with the
    revisions of `revisions_from` (`revisions`, else `revision`)."""
    listed, single = sources_from.get("sources"), sources_from.get("source")
    sources = listed if isinstance(listed, list) and listed else [single]
    many, one = revisions_from.get("revisions"), revisions_from.get("revision")
    revisions = many if isinstance(many, list) and many else [one]
    for source, revision in zip(sources, revisions, strict=False):
        if isinstance(source, Mapping) and source.get("chart") and revision:
            url, chart, _ = chart_source_fields(source)
            yield (url, chart, str(revision))


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}
