"""Repository credentials for `headway serve`: Argo CD repository Secrets read from the store.

`RepoCredentialsProvider` is the `credentials_for` of the one `GitCache` that the Application
controller and the Git-convergence controller share. Each call lists the `repository` and
`repo-creds` Secrets of the Argo CD namespace; the parsed index is rebuilt only when their
names or resourceVersions changed, so an edited, added or deleted Secret takes effect on the
next fetch or push. A malformed Secret is reported once per change (its name and field,
never a value) and skipped; the others still work.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from headway.cluster.errors import ClusterError
from headway.cluster.protocol import Cluster, Obj
from headway.source.git import GitCredentials
from headway.source.repo_credentials import (
    REPO_CREDS,
    REPOSITORY,
    SECRET_TYPE_LABEL,
    CredentialIndex,
    build_index,
)

__all__ = ["RepoCredentialsProvider"]

_SELECTOR = f"{SECRET_TYPE_LABEL} in ({REPOSITORY},{REPO_CREDS})"

Signature = tuple[tuple[str, str], ...]


def _signature(secrets: list[Obj]) -> Signature:
    meta = [s.get("metadata") or {} for s in secrets]
    return tuple(sorted((str(m.get("name")), str(m.get("resourceVersion"))) for m in meta))


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
        self._seen: Signature | None = None
        self._index = CredentialIndex()

    def __call__(self, url: str) -> GitCredentials | None:
        return self.index().for_url(url)

    def index(self) -> CredentialIndex:
        """The current index, re-read when a repository Secret changed."""
        try:
            secrets = self._cluster.list(
                "v1", "Secret", namespace=self._namespace, label_selector=_SELECTOR
            )
        except ClusterError as err:
            self._report(f"repository credentials: cannot list Secrets: {err}")
            return self._index  # the last good view beats none while the store hiccups
        signature = _signature(secrets)
        with self._lock:
            if signature != self._seen:
                self._index = build_index(secrets)
                self._seen = signature
                for problem in self._index.problems:
                    self._report(f"repository credentials: {problem} (Secret skipped)")
            return self._index
