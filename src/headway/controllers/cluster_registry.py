"""Destinations to clusters: an Application's `destination` (server or name) resolves here.

The cluster Headway runs against is the in-cluster destination under Argo CD's names
(`in-cluster`, `https://kubernetes.default.svc`). Every other destination is registered by
an Argo CD cluster Secret in the control namespace (`cluster_secrets.py`); its client is
built on first use by `connect` (the engine passes the Kubernetes backend), kept while the
Secret stays the same, and closed when the Secret changes or goes. A Secret naming the
in-cluster server renames the in-cluster destination (and may scope it to namespaces), as
in Argo CD; the connection stays the one Headway runs with.

The Secrets are read again at most every `refresh_seconds` of the clock, and at once when
a destination is not found (a cluster added a moment ago is found on the next step). A
malformed Secret is reported once per change, by name and field, never by value.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from headway.clock import Clock
from headway.cluster.cluster_secrets import (
    IN_CLUSTER_NAME,
    IN_CLUSTER_SERVER,
    SECRET_TYPE_LABEL,
    ClusterSecret,
    ClusterSecretError,
    normalize_server,
    parse_cluster_secret,
)
from headway.cluster.errors import ClusterError
from headway.cluster.protocol import Cluster

__all__ = [
    "IN_CLUSTER_NAME",
    "IN_CLUSTER_SERVER",
    "ClusterEntry",
    "ClusterRegistry",
    "Connect",
    "ShardIdentity",
    "UnknownDestination",
]

Connect = Callable[[ClusterSecret], Cluster]


class UnknownDestination(ValueError):
    """A destination that names no usable cluster, or names one twice; says which."""


@dataclass(frozen=True)
class ClusterEntry:
    name: str
    server: str
    cluster: Cluster = field(repr=False)
    namespaces: tuple[str, ...] = ()  # empty: every namespace
    cluster_resources: bool = False


@dataclass(frozen=True)
class ShardIdentity:
    """A cluster as sharding sees it (controllers/sharding.py)."""

    cluster_id: str  # the cluster Secret's UID
    requested: int | None  # the Secret's `shard`


def _closing(cluster: Cluster) -> None:
    close = getattr(cluster, "close", None)
    if callable(close):
        close()


class ClusterRegistry:
    """Registered clusters by name and by server URL (trailing slashes ignored)."""

    def __init__(
        self,
        in_cluster: Cluster,
        *,
        connect: Connect | None = None,
        clock: Clock | None = None,
        namespace: str = "argocd",
        refresh_seconds: float = 3.0,
        report: Callable[[str], None] | None = None,
    ) -> None:
        self._in_cluster = in_cluster
        self._connect = connect
        self._clock = clock
        self._namespace = namespace
        self._refresh_seconds = refresh_seconds
        self._report = report or (lambda line: print(line, flush=True))
        self._lock = threading.Lock()
        self._read_at: float | None = None
        self._secrets: dict[str, tuple[str, ClusterSecret]] = {}  # name -> (version, parsed)
        self._clients: dict[str, tuple[str, Cluster]] = {}  # Secret name -> (version, client)
        self._reported: dict[str, str] = {}  # Secret name -> version reported as malformed
        self._fixed: list[ClusterEntry] = []

    def register(self, *, name: str, server: str, cluster: Cluster) -> None:
        """Add a destination by hand (embedding programs, tests): no Secret needed."""
        self._fixed = [e for e in self._fixed if e.name != name]
        self._fixed.append(ClusterEntry(name, normalize_server(server), cluster))

    def entries(self) -> tuple[ClusterEntry, ...]:
        """Every destination, in-cluster first; clients of Secret clusters not built yet
        are built now."""
        with self._lock:
            self._refresh(force=False)
            return tuple(self._entry(found) for found in self._candidates())

    def resolve(self, *, server: str | None, name: str | None) -> ClusterEntry:
        """The cluster for a destination; `UnknownDestination` says what was looked for."""
        if server and name:
            raise UnknownDestination(
                f"application destination can't have both name and server defined: "
                f"name {name!r}, server {server!r} (set one)"
            )
        if not server and not name:
            raise UnknownDestination("application destination has neither server nor name")
        with self._lock:
            self._refresh(force=False)
            found = self._find(server=server, name=name)
            if not found:
                self._refresh(force=True)
                found = self._find(server=server, name=name)
            if len(found) > 1:
                secrets = ", ".join(_origin(f) for f in found)
                raise UnknownDestination(
                    f"there are {len(found)} clusters named {name!r} ({secrets}): "
                    "target one by destination.server"
                )
            if not found:
                wanted = f"server {server!r}" if server else f"name {name!r}"
                known = ", ".join(f"{_label(c)}" for c in self._candidates())
                raise UnknownDestination(
                    f"there is no cluster with {wanted}; known clusters: {known} "
                    f"(clusters are registered by Secrets labelled "
                    f"{SECRET_TYPE_LABEL}=cluster in namespace {self._namespace})"
                )
            return self._entry(found[0])

    def shard_identity(self, *, server: str | None, name: str | None) -> ShardIdentity | None:
        """What sharding knows a destination's cluster by, without connecting to it: the
        cluster Secret's UID and `shard` ("" and None for the in-cluster destination without
        a Secret, and for clusters registered by hand); None when the destination names no
        single cluster (shard 0 reports that)."""
        if bool(server) == bool(name):
            return None
        with self._lock:
            self._refresh(force=False)
            found = self._find(server=server, name=name)
            if not found:
                self._refresh(force=True)
                found = self._find(server=server, name=name)
        if len(found) != 1:
            return None
        if isinstance(found[0], ClusterSecret):
            return ShardIdentity(found[0].uid, found[0].shard)
        return ShardIdentity("", None)

    def close(self) -> None:
        """Close every client built for a Secret (not the in-cluster one)."""
        with self._lock:
            for _, client in self._clients.values():
                _closing(client)
            self._clients.clear()

    # -- internals ----------------------------------------------------------------------------

    def _candidates(self) -> list[ClusterEntry | ClusterSecret]:
        secrets = [parsed for _, parsed in self._secrets.values()]
        renamed = [s for s in secrets if s.server == IN_CLUSTER_SERVER]
        in_cluster: ClusterEntry | ClusterSecret = renamed[0] if renamed else ClusterEntry(
            IN_CLUSTER_NAME, IN_CLUSTER_SERVER, self._in_cluster
        )
        others = sorted((s for s in secrets if s.server != IN_CLUSTER_SERVER),
                        key=lambda s: (s.name, s.secret_name))
        return [in_cluster, *self._fixed, *others]

    def _find(self, *, server: str | None, name: str | None) -> list[ClusterEntry | ClusterSecret]:
        wanted = normalize_server(server) if server else None
        return [c for c in self._candidates()
                if (wanted is not None and c.server == wanted) or (name and c.name == name)]

    def _entry(self, found: ClusterEntry | ClusterSecret) -> ClusterEntry:
        if isinstance(found, ClusterEntry):
            return found
        return ClusterEntry(found.name, found.server, self._client(found),
                            namespaces=found.namespaces, cluster_resources=found.cluster_resources)

    def _client(self, secret: ClusterSecret) -> Cluster:
        if secret.server == IN_CLUSTER_SERVER:
            return self._in_cluster
        version = self._secrets[secret.secret_name][0]
        cached = self._clients.get(secret.secret_name)
        if cached is not None and cached[0] == version:
            return cached[1]
        if self._connect is None:
            raise UnknownDestination(
                f"cluster {secret.name} ({secret.server}) is registered, but this engine "
                "was built without a way to connect to other clusters"
            )
        try:
            client = self._connect(secret)
        except ClusterError as err:
            raise UnknownDestination(f"cannot connect to cluster {secret.name}: {err}") from None
        self._clients[secret.secret_name] = (version, client)
        return client

    def _refresh(self, *, force: bool) -> None:
        now = self._clock.now().timestamp() if self._clock is not None else None
        fresh = (now is not None and self._read_at is not None
                 and now - self._read_at < self._refresh_seconds)
        if fresh and not force:
            return
        try:
            secrets = self._in_cluster.list("v1", "Secret", namespace=self._namespace,
                                            label_selector={SECRET_TYPE_LABEL: "cluster"})
        except ClusterError as err:
            self._report(f"cluster Secrets: cannot read them: {err}")
            return  # the last good view beats none while the store hiccups
        self._read_at = now
        self._secrets = self._parsed(secrets)
        for stale in [n for n, (v, _) in self._clients.items()
                      if self._secrets.get(n, ("",))[0] != v]:
            _closing(self._clients.pop(stale)[1])

    def _parsed(self, secrets: list[dict[str, object]]) -> dict[str, tuple[str, ClusterSecret]]:
        out: dict[str, tuple[str, ClusterSecret]] = {}
        for secret in secrets:
            meta = secret.get("metadata") or {}
            assert isinstance(meta, dict)
            name, version = str(meta.get("name")), str(meta.get("resourceVersion"))
            try:
                out[name] = (version, parse_cluster_secret(secret))
            except ClusterSecretError as err:
                if self._reported.get(name) != version:
                    self._reported[name] = version
                    self._report(f"{err} (Secret skipped)")
        return out


def _label(found: ClusterEntry | ClusterSecret) -> str:
    return f"{found.name} ({found.server})"


def _origin(found: ClusterEntry | ClusterSecret) -> str:
    return f"Secret {found.secret_name}" if isinstance(found, ClusterSecret) else "built in"
