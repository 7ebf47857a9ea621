"""Repository credentials for `headway serve`: Argo CD repository Secrets read from the store.

`RepoCredentialsProvider` is the `credentials_for` of the one `GitCache` that the Application
controller and the Git-convergence controller share. Each call catches up with the Secret watch
events of the Argo CD namespace since the last call (one cheap store query when nothing
happened; the first call replays every Secret there), keeps the `repository` and
`repo-creds` ones, and parses them again only when one of those changed (name or
resourceVersion), so an edited, added or deleted Secret takes effect on the next fetch or
push. A malformed Secret is reported once per change (its name and field,
never a value) and skipped; the others still work.

Custom certificate authorities come as in Argo CD from the ConfigMap `argocd-tls-certs-cm`
of the same namespace: one key per server host name (no port), its value PEM certificates;
`helm_options(url)` hands a chart repository's to the chart fetcher, which trusts them
besides the system's. The ConfigMap is followed through its own watch, like the Secrets.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from urllib.parse import urlsplit

from headway.cluster.errors import ClusterError, Gone
from headway.cluster.protocol import Cluster, WatchEvent, WatchEventType
from headway.model.obj import Obj
from headway.source.git import GitCredentials
from headway.source.repo_credentials import (
    REPO_CREDS,
    REPOSITORY,
    CredentialIndex,
    HelmRepoOptions,
    build_index,
    secret_type,
)

__all__ = ["TLS_CERTS_CONFIG_MAP", "RepoCredentialsProvider", "tls_host"]

TLS_CERTS_CONFIG_MAP = "argocd-tls-certs-cm"

Signature = tuple[tuple[str, str], ...]


def _signature(secrets: dict[str, Obj]) -> Signature:
    versions = (
        (n, str((s.get("metadata") or {}).get("resourceVersion"))) for n, s in secrets.items()
    )
    return tuple(sorted(versions))


def tls_host(url: str) -> str:
    """The key of `argocd-tls-certs-cm` for a repository URL: its host name, without port
    or user (a URL without a scheme, as an OCI repository is written, is read as one)."""
    parts = urlsplit(url if "://" in url else f"scheme://{url}")
    return (parts.hostname or "").lower()


class _ConfigMapWatch:
    """The data of one ConfigMap of a namespace, kept current through its watch events."""

    def __init__(self, cluster: Cluster, *, namespace: str, name: str) -> None:
        self._cluster, self._namespace, self._name = cluster, namespace, name
        self._revision: str | None = None
        self.data: dict[str, str] = {}

    def catch_up(self) -> None:
        try:
            events = self._events()
        except Gone:
            self._revision = None
            events = self._events()
        if self._revision is None:  # a replay of every ConfigMap: absent means deleted
            self.data = {}
        for event in events:
            meta = event.object.get("metadata") or {}
            if meta.get("name") == self._name:
                gone = event.type == WatchEventType.DELETED
                raw = {} if gone else event.object.get("data") or {}
                self.data = {str(k): str(v) for k, v in raw.items()}
            self._revision = event.resource_version

    def _events(self) -> list[WatchEvent]:
        return list(
            self._cluster.watch(
                "v1", "ConfigMap", namespace=self._namespace, resource_version=self._revision
            )
        )


class RepoCredentialsProvider:
    """`provider(url)` -> the credentials of the Secrets in `namespace` for that URL."""

    def __init__(
        self,
        cluster: Cluster,
        *,
        namespace: str = "argocd",
        report: Callable[[str], None] | None = None,
    ) -> None:
        self._cluster = cluster
        self._namespace = namespace
        self._report = report or (lambda line: print(line, flush=True))
        self._lock = threading.Lock()
        self._revision: str | None = None  # None: replay every Secret on the next call
        self._secrets: dict[str, Obj] = {}  # name -> repository / repo-creds Secret
        self._seen: Signature = ()
        self._index = CredentialIndex()
        self._tls_certs = _ConfigMapWatch(cluster, namespace=namespace, name=TLS_CERTS_CONFIG_MAP)

    def __call__(self, url: str) -> GitCredentials | None:
        return self.index().for_url(url)

    def helm(self, url: str) -> GitCredentials | None:
        """The credentials of a Helm chart repository (Secrets of `type: helm`)."""
        return self.index().for_url(url, repo_type="helm")

    def helm_options(self, url: str) -> HelmRepoOptions:
        """A chart repository's `type: helm` Secret options, with the CAs
        `argocd-tls-certs-cm` holds for its host."""
        options = self.index().helm_options(url)
        with self._lock:
            try:
                self._tls_certs.catch_up()
            except ClusterError as err:
                self._report(f"repository credentials: cannot read {TLS_CERTS_CONFIG_MAP}: {err}")
            ca = self._tls_certs.data.get(tls_host(url))
        return replace(options, ca_data=ca) if ca else options

    def index(self) -> CredentialIndex:
        """The current index, parsed again when a repository Secret changed."""
        with self._lock:
            try:
                self._catch_up()
            except ClusterError as err:
                self._report(f"repository credentials: cannot read Secrets: {err}")
                return self._index  # the last good view beats none while the store hiccups
            signature = _signature(self._secrets)
            if signature != self._seen:
                self._index = build_index(self._secrets.values())
                self._seen = signature
                for problem in self._index.problems:
                    self._report(f"repository credentials: {problem} (Secret skipped)")
            return self._index

    def _catch_up(self) -> None:
        try:
            events = self._events()
        except Gone:  # too far behind to resume: start over from the current Secrets
            self._revision = None
            events = self._events()
        if self._revision is None:
            self._secrets.clear()
        for event in events:
            self._apply(event)
            self._revision = event.resource_version

    def _events(self) -> list[WatchEvent]:
        return list(
            self._cluster.watch(
                "v1", "Secret", namespace=self._namespace, resource_version=self._revision
            )
        )

    def _apply(self, event: WatchEvent) -> None:
        name = str((event.object.get("metadata") or {}).get("name"))
        typed = secret_type(event.object) in (REPOSITORY, REPO_CREDS)
        if event.type != WatchEventType.DELETED and typed:
            self._secrets[name] = event.object
        else:  # deleted, or its type label removed
            self._secrets.pop(name, None)
