"""Charts from HTTP(S) Helm repositories: read the index, choose the version, download,
verify and unpack the archive into the persistent chart cache (`headway.source.chart_cache`).

The index is read once and kept until `forget_index` (the Application controller forgets it
on its poll interval and on a refresh request, as it fetches Git); its choice of version per
`targetRevision` is kept as long. An archive is downloaded once per repository, chart,
version and digest; after that it renders from disk. When the index cannot be read, a
`targetRevision` that is an exact version still renders from the cache (the offline rollback
to a version synced before); a constraint, or a version never downloaded, is an error naming
the repository and chart.

Credentials (`credentials_for(url)`, from `type: helm` repository Secrets) go as HTTP basic
auth to the repository, and to an archive URL on another host only with
`helm.passCredentials` (Argo CD's rule); they never appear in an error.
"""

from __future__ import annotations

import base64
import hashlib
import ssl
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from headway.source.chart_cache import CachedChart, ChartCache, ChartRef
from headway.source.git import GitCredentials
from headway.source.helm_index import (
    ChartVersion,
    HelmRepositoryError,
    archive_url,
    choose_version,
    is_oci,
    parse_index,
    redact_url,
)
from headway.source.semver_tags import parse_version

__all__ = ["MAX_ARCHIVE_BYTES", "MAX_INDEX_BYTES", "HelmCharts", "chart_source_fields"]

MAX_INDEX_BYTES = 64 * 1024 * 1024
MAX_ARCHIVE_BYTES = 32 * 1024 * 1024
CredentialsFor = Callable[[str], GitCredentials | None]


def chart_source_fields(source: Mapping[str, Any]) -> tuple[str, str, str]:
    """(repository URL, chart, targetRevision) of a chart source."""
    url = str(source.get("repoURL") or "").strip()
    return url, str(source.get("chart") or "").strip(), str(source.get("targetRevision") or "")


def _same_origin(a: str, b: str) -> bool:
    left, right = urlsplit(a), urlsplit(b)
    return (left.scheme, left.netloc.rpartition("@")[2]) == (
        right.scheme,
        right.netloc.rpartition("@")[2],
    )


class HelmCharts:
    """Resolves chart sources to unpacked charts; one per controller, thread-safe."""

    def __init__(
        self,
        cache_root: Path,
        *,
        credentials_for: CredentialsFor | None = None,
        timeout_seconds: float = 30.0,
    ) -> None:
        self.cache = ChartCache(cache_root)
        self._credentials_for = credentials_for
        self._timeout = timeout_seconds
        self._lock = threading.Lock()
        self._indexes: dict[str, bytes | HelmRepositoryError] = {}
        self._resolved: dict[tuple[str, str, str], CachedChart] = {}
        self.index_reads = 0  # index downloads attempted, for tests and metrics
        self.downloads = 0  # archives downloaded

    def forget_index(self, url: str) -> None:
        """The next resolution of a chart of `url` reads its index again."""
        with self._lock:
            self._indexes.pop(url, None)
            self._resolved = {k: v for k, v in self._resolved.items() if k[0] != url}

    def resolve(self, source: Mapping[str, Any]) -> CachedChart:
        """The chart a source names, unpacked; `HelmRepositoryError` when it cannot be had."""
        url, chart, target = chart_source_fields(source)
        if is_oci(source) or source.get("enableOCI"):
            reason = "OCI Helm repositories are not supported yet; use an HTTP(S) chart repository"
            raise HelmRepositoryError(url, chart, reason)
        if not target.strip():
            reason = "targetRevision is required: a chart version or a constraint such as `1.*`"
            raise HelmRepositoryError(url, chart, reason)
        key = (url, chart, target)
        with self._lock:
            known = self._resolved.get(key)
        if known is not None:
            return known
        found = self._resolve(url, chart, target, pass_credentials=_passes(source))
        with self._lock:
            self._resolved[key] = found
        return found

    def _resolve(self, url: str, chart: str, target: str, *, pass_credentials: bool) -> CachedChart:
        try:
            versions = parse_index(self._index(url, chart), url=url, chart=chart)
        except HelmRepositoryError:
            cached = self.cache.latest(url, chart, target) if parse_version(target) else None
            if cached is None:
                raise
            return cached  # an exact version synced before: its archive is on disk
        entry = choose_version(versions, target, url=url, chart=chart)
        ref = ChartRef(url, chart, entry.version, entry.digest)
        return self.cache.get(ref) or self._download(ref, entry, pass_credentials)

    def _index(self, url: str, chart: str) -> bytes:
        with self._lock:
            known = self._indexes.get(url)
        if known is None:
            index_url = url.rstrip("/") + "/index.yaml"
            try:
                known = self._get(index_url, url, chart, limit=MAX_INDEX_BYTES, auth=True)
            except HelmRepositoryError as err:
                known = err
            with self._lock:
                self._indexes[url] = known
        if isinstance(known, HelmRepositoryError):
            raise known
        return known

    def _download(self, ref: ChartRef, entry: ChartVersion, pass_credentials: bool) -> CachedChart:
        where = archive_url(ref.url, entry)
        auth = pass_credentials or _same_origin(where, ref.url)
        data = self._get(where, ref.url, ref.chart, limit=MAX_ARCHIVE_BYTES, auth=auth)
        self.downloads += 1
        actual = hashlib.sha256(data).hexdigest()
        if ref.digest and actual != ref.digest:
            reason = (
                f"version {ref.version}: the archive's sha256 is {actual}, the index says "
                f"{ref.digest}; not used"
            )
            raise HelmRepositoryError(ref.url, ref.chart, reason)
        return self.cache.store(ref, data)

    def _get(self, target: str, url: str, chart: str, *, limit: int, auth: bool) -> bytes:
        """GET `target` (`url`/`chart` for messages), at most `limit` bytes."""
        if target.startswith("http://") or target.startswith("https://"):
            request, context = self._request(target, url, auth=auth)
        else:
            raise HelmRepositoryError(url, chart, f"{redact_url(target)} is not an HTTP(S) URL")
        self.index_reads += target.endswith("/index.yaml")
        try:
            with urllib.request.urlopen(request, timeout=self._timeout, context=context) as reply:
                data: bytes = reply.read(limit + 1)
        except urllib.error.HTTPError as err:
            denied = " (check the repository's credentials)" if err.code in (401, 403) else ""
            reason = f"GET {redact_url(target)}: HTTP {err.code} {err.reason}{denied}"
            raise HelmRepositoryError(url, chart, reason) from None
        except (urllib.error.URLError, OSError, ValueError) as err:
            detail = getattr(err, "reason", None) or err
            reason = f"cannot reach {redact_url(target)}: {detail}"
            raise HelmRepositoryError(url, chart, reason) from None
        if len(data) > limit:
            reason = f"{redact_url(target)} is larger than {limit // (1024 * 1024)} MiB"
            raise HelmRepositoryError(url, chart, reason)
        return data

    def _request(
        self, target: str, url: str, *, auth: bool
    ) -> tuple[urllib.request.Request, ssl.SSLContext | None]:
        request = urllib.request.Request(target, headers={"User-Agent": "headway"})
        credentials = self._credentials_for(url) if self._credentials_for is not None else None
        if credentials is None:
            return request, None
        if auth and (credentials.username or credentials.password):
            pair = f"{credentials.username or ''}:{credentials.password or ''}"
            request.add_header("Authorization", "Basic " + base64.b64encode(pair.encode()).decode())
        context = None
        if credentials.insecure_skip_tls_verify:
            context = ssl.create_default_context()
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        return request, context


def _passes(source: Mapping[str, Any]) -> bool:
    helm = source.get("helm")
    return isinstance(helm, Mapping) and bool(helm.get("passCredentials"))
