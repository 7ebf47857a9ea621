"""Destinations to clusters: an Application's `destination` (server or name) resolves here.

The local runtime is the default cluster under Argo CD's in-cluster names (`in-cluster`,
`https://kubernetes.default.svc`); other backends register under their own name and server
without any change to the engine.
"""

from __future__ import annotations

from dataclasses import dataclass

from headway.cluster.protocol import Cluster

__all__ = [
    "IN_CLUSTER_NAME",
    "IN_CLUSTER_SERVER",
    "ClusterEntry",
    "ClusterRegistry",
    "UnknownDestination",
]

IN_CLUSTER_NAME = "in-cluster"
IN_CLUSTER_SERVER = "https://kubernetes.default.svc"


class UnknownDestination(LookupError):
    """No registered cluster has the destination's server or name."""


@dataclass(frozen=True)
class ClusterEntry:
    name: str
    server: str
    cluster: Cluster


class ClusterRegistry:
    """Registered clusters by name and by server URL (trailing slashes ignored)."""

    def __init__(self, in_cluster: Cluster) -> None:
        self._entries: list[ClusterEntry] = []
        self.register(name=IN_CLUSTER_NAME, server=IN_CLUSTER_SERVER, cluster=in_cluster)

    def register(self, *, name: str, server: str, cluster: Cluster) -> None:
        self._entries = [e for e in self._entries if e.name != name]
        self._entries.append(ClusterEntry(name, server.rstrip("/"), cluster))

    def entries(self) -> tuple[ClusterEntry, ...]:
        return tuple(self._entries)

    def resolve(self, *, server: str | None, name: str | None) -> ClusterEntry:
        """The cluster for a destination; `UnknownDestination` says what was looked for."""
        for entry in self._entries:
            if server and entry.server == server.rstrip("/"):
                return entry
            if name and entry.name == name:
                return entry
        wanted = f"server {server!r}" if server else f"name {name!r}"
        known = ", ".join(f"{e.name} ({e.server})" for e in self._entries)
        raise UnknownDestination(f"there is no cluster with {wanted}; known clusters: {known}")
