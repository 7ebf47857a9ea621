"""An ApplicationSet controller over a local store and a fake forge, as the scmProvider and
pullRequest generator tests drive it: one set, its token Secret, the forge allowed by the
forge policy, a virtual clock; and what those tests read back (Applications, status,
the error condition, the forge's request paths)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

import httpx2

from e2e_sync.e2e_helpers import API, default_project
from headway.appset.forge_policy import ForgePolicy
from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
from headway.controllers.appset.controller import ApplicationSetController
from headway.controllers.manager import ObjectKey
from headway.source.git import GitCache

POLL = 180.0


class FakeForge(Protocol):
    url: str
    requests: list[Any]


class ForgeWorld:
    def __init__(
        self,
        tmp_path: Path,
        store: LocalCluster,
        server: FakeForge,
        *,
        key: ObjectKey,
        secret: dict[str, Any],
        policy: ForgePolicy | None = None,
        api: str | None = None,
    ) -> None:
        self.store, self.server, self.key = store, server, key
        self.clock = VirtualClock()
        self.http = httpx2.Client(timeout=2.0)
        self.controller = ApplicationSetController(
            cluster=store,
            clock=self.clock,
            git=GitCache(tmp_path / "git-cache"),
            namespace="argocd",
            poll_seconds=POLL,
            http=self.http,
            forge_policy=policy or ForgePolicy(allowed_api_urls=(server.url,)),
        )
        for manifest in (
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "argocd"}},
            default_project(),
            secret,
        ):
            store.apply(manifest, field_manager="t")
        self.api = server.url if api is None else api

    def apply(self, appset: dict[str, Any]) -> float | None:
        self.store.apply(appset, field_manager="t", force=True)
        return self.controller.step(self.key)

    def apps(self) -> dict[str, dict[str, Any]]:
        """The Applications not being deleted (a deleted one waits for its finalizer)."""
        return {
            a["metadata"]["name"]: a
            for a in self.store.list(API, "Application", namespace="argocd")
            if not a["metadata"].get("deletionTimestamp")
        }

    def versions(self) -> dict[str, str]:
        return {n: a["metadata"]["resourceVersion"] for n, a in self.apps().items()}

    def status(self) -> dict[str, Any]:
        found = self.store.get(API, "ApplicationSet", self.key.name, "argocd")
        return found.get("status") or {}

    def error(self) -> dict[str, Any]:
        conditions = {c["type"]: c for c in self.status().get("conditions") or []}
        return conditions["ErrorOccurred"]

    def paths(self) -> list[str]:
        return [r.path for r in self.server.requests]
