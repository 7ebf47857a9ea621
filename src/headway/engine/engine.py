"""`Engine`: Headway's controllers for one store, built from settings, run or stepped.

    engine = Engine(cluster=cluster, clock=clock, http=http, settings=EngineSettings())
    await engine.step()          # one pass: read watches, take every due step
    await engine.run()           # until engine.stop() (or the given event) is set
    await engine.run(stop, collector=CollectorPolicy())  # as `headway serve` runs it
    engine.close()               # the clients of other destination clusters

Building the engine builds the controllers of `settings.loops` (the Application loop
publishes `settings.apps` and starts its `/metrics` server then). The engine neither opens
the store nor takes the state directory's leader lock: the program that embeds it owns both,
as `headway serve` does.
"""

from __future__ import annotations

import asyncio

import httpx2

from headway.clock import Clock
from headway.cluster.protocol import Cluster
from headway.controllers.cluster_registry import Connect
from headway.controllers.collector_policy import CollectorPolicy
from headway.controllers.manager import Manager, ReconcileTimings, StepController
from headway.controllers.repo_credentials import RepoCredentialsProvider
from headway.decisions import DecisionJournal, SqliteJournal, journal_path
from headway.engine.destinations import connect_destination
from headway.engine.loops import BUILDERS, LoopParts
from headway.engine.settings import EngineSettings, Loop
from headway.source.git import GitCache

__all__ = ["Engine", "default_git_cache"]


def default_git_cache(cluster: Cluster, settings: EngineSettings) -> GitCache:
    """The one Git cache of an engine (`<state_dir>/git-cache`), shared by the Application and
    Git-convergence loops, with credentials from the store's Argo CD repository Secrets
    (`argocd` namespace), read again at each fetch."""
    provider = RepoCredentialsProvider(cluster)
    return GitCache(settings.state_dir / "git-cache", credentials_for=provider)


class Engine:
    def __init__(
        self,
        *,
        cluster: Cluster,
        clock: Clock,
        http: httpx2.AsyncClient,
        settings: EngineSettings | None = None,
        git: GitCache | None = None,
        connect: Connect | None = connect_destination,
        journal: DecisionJournal | None = None,
    ) -> None:
        self.settings = settings or EngineSettings()
        self.git = git or default_git_cache(cluster, self.settings)
        self._own_journal = journal is None
        self.journal = journal or SqliteJournal(journal_path(self.settings.state_dir))
        parts = LoopParts(
            cluster, clock, http, self.git, self.settings, connect=connect, journal=self.journal
        )
        self.clusters = parts.clusters  # in-cluster, and what cluster Secrets register
        self.registry = parts.registry  # what `/metrics` serves (settings.metrics_port)
        self._manager = Manager(
            cluster, clock, resync_seconds=self.settings.resync_seconds,
            timings=ReconcileTimings(self.registry),
        )
        self._stop = asyncio.Event()
        for loop in Loop:  # a fixed order, so logs and `controllers` read the same every time
            if loop in self.settings.loops:
                for controller in BUILDERS[loop](parts):
                    self._manager.register(controller)

    @property
    def controllers(self) -> tuple[str, ...]:
        """The names of the registered step controllers, in start order."""
        return self._manager.controllers

    def controller(self, name: str) -> StepController:
        """The step controller registered as `name`, to step one key by hand in tests."""
        return self._manager.controller(name)

    async def step(self) -> int:
        """One pass: read new watch events, then take every due step; returns how many."""
        return await self._manager.run_once()

    async def run(
        self, stop: asyncio.Event | None = None, *, collector: CollectorPolicy | None = None
    ) -> None:
        """Step until `stop()` is called or `stop` is set, sleeping between due steps.
        `collector` is a garbage collector policy for a process that runs nothing else
        (`headway serve` passes one; it changes the whole process's collector)."""
        if stop is None:
            await self._manager.run(self._stop, collector=collector)
            return
        waiter = asyncio.create_task(_either(stop, self._stop))
        try:
            await self._manager.run(self._stop, collector=collector)
        finally:
            waiter.cancel()

    def stop(self) -> None:
        """Ask `run()` to return after the step in progress."""
        self._stop.set()

    def close(self) -> None:
        """Close the clients built for other clusters and the decision journal it opened (not
        the store or a journal the engine was given)."""
        self.clusters.close()
        if self._own_journal and isinstance(self.journal, SqliteJournal):
            self.journal.close()


async def _either(outer: asyncio.Event, inner: asyncio.Event) -> None:
    await outer.wait()
    inner.set()
