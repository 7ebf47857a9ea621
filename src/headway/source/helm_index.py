"""A Helm repository's `index.yaml`: parsed, and a chart version chosen from it. Pure.

A chart source's `targetRevision` is an exact version (`1.2.3`, `v1.2`) or a semver
constraint (`1.2.*`, `>=1.0.0 <2.0.0`, `*`), Argo CD's rules (`headway.source.semver_tags`):
a constraint picks the highest version of the chart that satisfies it; pre-releases only
match a constraint that names one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit, urlunsplit

import yaml

from headway.source.errors import SourceError
from headway.source.semver_tags import highest_matching_tag, is_constraint, parse_version

__all__ = [
    "ChartVersion",
    "HelmRepositoryError",
    "archive_url",
    "chart_versions",
    "choose_version",
    "is_oci",
    "load_entries",
    "parse_index",
    "redact_url",
]

_DIGEST = re.compile(r"[0-9a-f]{64}")


class HelmRepositoryError(SourceError):
    """A chart that cannot be had from its repository; the message names both, never a
    credential (user info is cut from every URL it shows)."""

    def __init__(self, url: str, chart: str, reason: str) -> None:
        where = f"chart {chart!r} from Helm repository {redact_url(url)}"
        super().__init__(f"{where}: {reason}")
        self.url = redact_url(url)
        self.chart = chart
        self.reason = reason


@dataclass(frozen=True)
class ChartVersion:
    """One entry of the index: a chart at one version, where to download it, its sha256."""

    chart: str
    version: str
    urls: tuple[str, ...]
    digest: str  # lower-case hex sha256 of the archive; "" when the index gives none


def redact_url(url: str) -> str:
    """`https://user:token@host/x` -> `https://host/x`: URLs in messages carry no secret."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


def is_oci(source: Mapping[str, Any]) -> bool:
    """An OCI registry source (`oci://` URL, or a repoURL without a scheme, as Argo CD
    writes OCI Helm repositories with `enableOCI`)."""
    url = str(source.get("repoURL") or "")
    return url.startswith("oci://") or "://" not in url


def _entry(chart: str, raw: object, *, url: str) -> ChartVersion | None:
    if not isinstance(raw, Mapping) or not raw.get("version"):
        return None
    urls = raw.get("urls") or []
    if not isinstance(urls, list) or not all(isinstance(u, str) for u in urls):
        raise HelmRepositoryError(url, chart, f"index.yaml: entries.{chart}: urls must be a list")
    digest = str(raw.get("digest") or "").strip().lower()
    if digest and _DIGEST.fullmatch(digest) is None:
        reason = f"index.yaml: entries.{chart} {raw.get('version')}: digest is not a sha256"
        raise HelmRepositoryError(url, chart, reason)
    return ChartVersion(chart, str(raw["version"]), tuple(urls), digest)


def load_entries(text: bytes, *, url: str, chart: str) -> Mapping[str, Any]:
    """The `entries` of an index file (chart name -> its versions, as read); `chart` only
    names the chart asking, for messages. The costly step: a large index is megabytes."""
    try:
        loaded = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = f" line {mark.line + 1}" if mark is not None else ""
        raise HelmRepositoryError(url, chart, f"index.yaml{line}: invalid YAML") from None
    entries = loaded.get("entries") if isinstance(loaded, Mapping) else None
    if not isinstance(entries, Mapping):
        raise HelmRepositoryError(url, chart, "index.yaml has no `entries` mapping")
    return entries


def chart_versions(entries: Mapping[str, Any], *, url: str, chart: str) -> tuple[ChartVersion, ...]:
    """The versions of `chart` in loaded index entries (empty when the chart is absent)."""
    listed = entries.get(chart) or []
    if not isinstance(listed, list):
        raise HelmRepositoryError(url, chart, f"index.yaml: entries.{chart} must be a list")
    found = [_entry(chart, raw, url=url) for raw in listed]
    return tuple(v for v in found if v is not None)


def parse_index(text: bytes, *, url: str, chart: str) -> tuple[ChartVersion, ...]:
    """The versions of `chart` in an index file (an empty tuple when the chart is absent)."""
    return chart_versions(load_entries(text, url=url, chart=chart), url=url, chart=chart)


def choose_version(
    versions: tuple[ChartVersion, ...], target: str, *, url: str, chart: str
) -> ChartVersion:
    """The version `target` names: the same version string (or the same semver), or the
    highest one a constraint allows."""
    if not versions:
        raise HelmRepositoryError(url, chart, "no such chart in the repository's index.yaml")
    wanted = parse_version(target)
    if wanted is not None:
        same = [v for v in versions if v.version == target]
        same = same or [v for v in versions if parse_version(v.version) == wanted]
        if same:
            return same[0]
        raise HelmRepositoryError(url, chart, f"version {target!r} is not in the index")
    if not is_constraint(target):
        reason = f"targetRevision {target!r} is neither a chart version nor a semver constraint"
        raise HelmRepositoryError(url, chart, reason)
    best = highest_matching_tag(target, [v.version for v in versions])
    if best is None:
        raise HelmRepositoryError(url, chart, f"no version satisfies {target!r}")
    return next(v for v in versions if v.version == best)


def archive_url(repository: str, entry: ChartVersion) -> str:
    """Where to download the chart: its first URL, relative to the repository's index
    (`charts/app-1.0.0.tgz`) or absolute."""
    if not entry.urls:
        reason = f"index.yaml: version {entry.version} lists no download URL"
        raise HelmRepositoryError(repository, entry.chart, reason)
    return urljoin(repository.rstrip("/") + "/", entry.urls[0])
