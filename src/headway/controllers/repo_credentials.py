"""Repository credentials for `headway serve`: Argo CD repository Secrets read from the store.

`RepoCredentialsProvider` is the `credentials_for` of the one `GitCache` that the Application
controller and the Git-convergence controller share. Each call catches up with the Secret watch
events of the Argo CD namespace since the last call (one cheap store query when nothing
happened; the first call replays every Secret there), keeps the `repository` and
`repo-creds` ones, and parses them again only when one of those changed (name or
resourceVersion), so an edited, added or deleted Secret takes effect on the next fetch or
push. A malformed Secret is reported once per change (its name and field,
never a value) and skipped; the others still work.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from headway.cluster.errors import ClusterError, Gone
from headway.cluster.protocol import Cluster, WatchEvent, WatchEventType
from headway.model.obj import Obj
from headway.source.git import GitCredentials
from headway.source.repo_credentials import (
    REPO_CREDS,
    REPOSITORY,
    CredentialIndex,
    build_index,
    secret_type,
)

__all__ = ["RepoCredentialsProvider"]

Signature = tuple[tuple[str, str], ...]


def _signature(secrets: dict[str, Obj]) -> Signature:
    versions = (
        (n, str((s.get("metadata") or {}).get("resourceVersion"))) for n, s in secrets.items()
    )
    return tuple(sorted(versions))


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

    def __call__(self, url: str) -> GitCredentials | None:
        return self.index().for_url(url)

    def helm(self, url: str) -> GitCredentials | None:
        """The credentials of a Helm chart repository (Secrets of `type: helm`)."""
        return self.index().for_url(url, repo_type="helm")

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
