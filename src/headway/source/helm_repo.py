"""Charts from Helm repositories (HTTP(S) ones with an `index.yaml`, and OCI registries,
`headway.source.helm_oci`): list the versions, choose one, download, verify and unpack the
archive into the persistent chart cache (`headway.source.chart_cache`).

The index (an OCI registry's tag list) is read once and kept until `forget_index` (the
Application controller forgets it on its poll interval and on a refresh request, as it
fetches Git); its choice of version per `targetRevision` is kept as long. An archive is
downloaded once per repository, chart, version and digest; after that it renders from disk.
When the index cannot be read, a
`targetRevision` that is an exact version still renders from the cache (the offline rollback
to a version synced before); a constraint, or a version never downloaded, is an error naming
the repository and chart.

Credentials (`credentials_for(url)`, from `type: helm` repository Secrets) go as HTTP basic
auth to the repository (a registry's Bearer challenge is answered by asking its token
service with them), to an archive URL on another host only with `helm.passCredentials`
(Argo CD's rule), and never along a redirect; they never appear in an error. Their client
certificate is presented to any HTTPS host the fetch asks, and `insecure` skips
verification, as Helm's client does. `options_for(url)` (`HelmRepoOptions`) adds the rest of
the Secret: `enableOCI` (an OCI registry, whatever the URL), `insecureOCIForceHttp` (the
registry over plain HTTP), the CAs trusted for the host, and a field Headway cannot honour,
which fails the fetch naming it (`headway.source.helm_tls` builds the TLS context).
"""

from __future__ import annotations

import base64
import hashlib
import json
import ssl
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from headway.source.chart_cache import (
    DEFAULT_MAX_BYTES,
    CachedChart,
    ChartCache,
    ChartRef,
    ChartVersionKey,
    KeepVersions,
)
from headway.source.git import GitCredentials
from headway.source.helm_index import (
    ChartVersion,
    HelmRepositoryError,
    archive_url,
    chart_versions,
    choose_version,
    is_oci,
    load_entries,
    redact_url,
)
from headway.source.helm_oci import (
    MANIFEST_TYPES,
    BearerChallenge,
    OciChart,
    chart_layer_digest,
    oci_chart,
    parse_challenge,
    parse_tags,
)
from headway.source.helm_tls import TlsContexts
from headway.source.repo_credentials import HelmRepoOptions
from headway.source.semver_tags import parse_version

__all__ = ["MAX_ARCHIVE_BYTES", "MAX_INDEX_BYTES", "HelmCharts", "chart_source_fields"]

MAX_INDEX_BYTES = 64 * 1024 * 1024
MAX_ARCHIVE_BYTES = 32 * 1024 * 1024
CredentialsFor = Callable[[str], GitCredentials | None]
OptionsFor = Callable[[str], HelmRepoOptions]


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
        options_for: OptionsFor | None = None,
        timeout_seconds: float = 30.0,
        max_cache_bytes: int = DEFAULT_MAX_BYTES,
        in_use: KeepVersions | None = None,
    ) -> None:
        """`in_use` names the chart versions Applications render or may roll back to (None
        when it cannot be known now): the cache never evicts them, nor a chart resolved since
        the index was last forgotten (a render may be reading it)."""
        self.cache = ChartCache(cache_root, max_bytes=max_cache_bytes, keep=self._kept)
        self._in_use = in_use or (lambda: ())
        self._credentials_for = credentials_for
        self._options_for = options_for or (lambda url: HelmRepoOptions())
        self._tls = TlsContexts()
        self._timeout = timeout_seconds
        self._lock = threading.Lock()
        # (repository URL, chart for an OCI registry's tag list, else "") -> the answer
        self._indexes: dict[tuple[str, str], bytes | HelmRepositoryError] = {}
        self._entries: dict[str, Mapping[str, Any]] = {}  # an index read, loaded once
        self._resolved: dict[tuple[str, str, str], CachedChart] = {}
        self.index_reads = 0  # index (or tag list) reads attempted, for tests
        self.downloads = 0  # archives downloaded, for tests

    def _kept(self) -> set[ChartVersionKey] | None:
        pinned = self._in_use()
        if pinned is None:
            return None
        with self._lock:
            resolved = {(c.ref.url, c.ref.chart, c.ref.version) for c in self._resolved.values()}
        return resolved | set(pinned)

    def forget_index(self, url: str) -> None:
        """The next resolution of a chart of `url` reads its index again."""
        with self._lock:
            self._indexes = {k: v for k, v in self._indexes.items() if k[0] != url}
            self._entries.pop(url, None)
            self._resolved = {k: v for k, v in self._resolved.items() if k[0] != url}

    def resolve(self, source: Mapping[str, Any]) -> CachedChart:
        """The chart a source names, unpacked; `HelmRepositoryError` when it cannot be had."""
        url, chart, target = chart_source_fields(source)
        if not target.strip():
            reason = "targetRevision is required: a chart version or a constraint such as `1.*`"
            raise HelmRepositoryError(url, chart, reason)
        key = (url, chart, target)
        with self._lock:
            known = self._resolved.get(key)
        if known is not None:
            return known
        options = self._options_for(url)
        if options.refused:
            raise HelmRepositoryError(url, chart, options.refused)
        oci = is_oci(source) or options.enable_oci
        found = self._resolve(url, chart, target, pass_credentials=_passes(source), oci=oci)
        with self._lock:
            self._resolved[key] = found
        return found

    def resolve_dependency(self, source: Mapping[str, Any]) -> CachedChart:
        """`resolve` for a chart's dependency, which the cache then never evicts."""
        found = self.resolve(source)
        self.cache.mark_dependency(found)
        return found

    def _resolve(
        self, url: str, chart: str, target: str, *, pass_credentials: bool, oci: bool
    ) -> CachedChart:
        try:
            versions = self._versions(url, chart, oci=oci)
        except HelmRepositoryError:
            cached = self.cache.latest(url, chart, target) if parse_version(target) else None
            if cached is None:
                raise
            return cached  # an exact version synced before: its archive is on disk
        entry = choose_version(versions, target, url=url, chart=chart)
        if oci:
            entry = self._oci_entry(url, entry)
        ref = ChartRef(url, chart, entry.version, entry.digest)
        return self.cache.get(ref) or self._download(ref, entry, pass_credentials)

    def _versions(self, url: str, chart: str, *, oci: bool) -> tuple[ChartVersion, ...]:
        if oci:
            tags = self._listing(url, chart, self._oci_chart(url, chart).tags_url(), per_chart=True)
            return parse_tags(tags, url=url, chart=chart)
        index = self._listing(url, chart, url.rstrip("/") + "/index.yaml", per_chart=False)
        with self._lock:
            entries = self._entries.get(url)
        if entries is None:
            entries = load_entries(index, url=url, chart=chart)
            with self._lock:
                self._entries[url] = entries
        return chart_versions(entries, url=url, chart=chart)

    def _oci_entry(self, url: str, entry: ChartVersion) -> ChartVersion:
        """The entry with its archive's digest and blob URL, from the tag's manifest."""
        where = self._oci_chart(url, entry.chart)
        manifest = self._get(
            where.manifest_url(entry.version), url, entry.chart,
            limit=MAX_INDEX_BYTES, auth=True, accept=MANIFEST_TYPES,
        )
        digest = chart_layer_digest(manifest, url=url, chart=entry.chart, version=entry.version)
        return replace(entry, digest=digest, urls=(where.blob_url(digest),))

    def _oci_chart(self, url: str, chart: str) -> OciChart:
        return oci_chart(url, chart, plain_http=self._options_for(url).oci_plain_http)

    def _listing(self, url: str, chart: str, target: str, *, per_chart: bool) -> bytes:
        """The index (or an OCI chart's tag list) at `target`, read once until
        `forget_index(url)`; a failure is kept as long, and names the chart asking."""
        key = (url, chart if per_chart else "")
        with self._lock:
            known = self._indexes.get(key)
        if known is None:
            try:
                known = self._get(target, url, chart, limit=MAX_INDEX_BYTES, auth=True)
            except HelmRepositoryError as err:
                known = err
            with self._lock:
                self._indexes[key] = known
        if isinstance(known, HelmRepositoryError):
            raise HelmRepositoryError(url, chart, known.reason)
        return known

    def _download(self, ref: ChartRef, entry: ChartVersion, pass_credentials: bool) -> CachedChart:
        where = archive_url(ref.url, entry)
        oci = is_oci({"repoURL": ref.url}) or self._options_for(ref.url).enable_oci
        home = self._oci_chart(ref.url, ref.chart).base if oci else ref.url
        auth = pass_credentials or _same_origin(where, home)
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

    def _get(
        self, target: str, url: str, chart: str, *, limit: int, auth: bool, accept: str = ""
    ) -> bytes:
        """GET `target` (`url`/`chart` for messages), at most `limit` bytes; a Bearer
        challenge (an OCI registry's) is answered with a token from its realm."""
        if not target.startswith(("http://", "https://")):
            raise HelmRepositoryError(url, chart, f"{redact_url(target)} is not an HTTP(S) URL")
        self.index_reads += target.endswith(("/index.yaml", "/tags/list"))
        request, context = self._request(target, url, chart, auth=auth, accept=accept)
        answer = self._open(request, context, url=url, chart=chart, limit=limit)
        if isinstance(answer, BearerChallenge):
            token = self._token(answer, url, chart, auth=auth)
            request, context = self._request(target, url, chart, auth=False, accept=accept)
            request.add_unredirected_header("Authorization", f"Bearer {token}")
            answer = self._open(request, context, url=url, chart=chart, limit=limit)
        if isinstance(answer, BearerChallenge):
            reason = f"GET {redact_url(target)}: HTTP 401 after a token (check the credentials)"
            raise HelmRepositoryError(url, chart, reason)
        return answer

    def _token(self, challenge: BearerChallenge, url: str, chart: str, *, auth: bool) -> str:
        """A registry token for the challenge's scope (anonymous without credentials)."""
        data = self._get(challenge.token_url(), url, chart, limit=1024 * 1024, auth=auth)
        try:
            reply = json.loads(data)
            token = str(reply.get("token") or reply.get("access_token") or "")
        except (ValueError, AttributeError):
            token = ""
        if not token:
            raise HelmRepositoryError(url, chart, "the registry's token service gave no token")
        return token

    def _open(
        self,
        request: urllib.request.Request,
        context: ssl.SSLContext | None,
        *,
        url: str,
        chart: str,
        limit: int,
    ) -> bytes | BearerChallenge:
        target = request.full_url
        try:
            with urllib.request.urlopen(request, timeout=self._timeout, context=context) as reply:
                data: bytes = reply.read(limit + 1)
        except urllib.error.HTTPError as err:
            challenge = parse_challenge(err.headers.get("WWW-Authenticate", "") or "")
            if err.code == 401 and challenge is not None and "Bearer" not in str(
                request.get_header("Authorization") or ""
            ):
                return challenge
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
        self, target: str, url: str, chart: str, *, auth: bool, accept: str = ""
    ) -> tuple[urllib.request.Request, ssl.SSLContext | None]:
        headers = {"User-Agent": "headway", **({"Accept": accept} if accept else {})}
        request = urllib.request.Request(target, headers=headers)
        credentials = self._credentials_for(url) if self._credentials_for is not None else None
        if credentials is not None and auth and (credentials.username or credentials.password):
            pair = f"{credentials.username or ''}:{credentials.password or ''}"
            token = base64.b64encode(pair.encode()).decode()
            request.add_unredirected_header("Authorization", f"Basic {token}")
        ca = self._options_for(url).ca_data
        try:
            context = self._tls.context(credentials, ca_data=ca)
        except ssl.SSLError as err:
            reason = f"the repository's TLS settings cannot be used: {err.reason or err}"
            raise HelmRepositoryError(url, chart, reason) from None
        return request, context


def _passes(source: Mapping[str, Any]) -> bool:
    helm = source.get("helm")
    return isinstance(helm, Mapping) and bool(helm.get("passCredentials"))
