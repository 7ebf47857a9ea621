"""`headway serve`: run the controllers against the local runtime's store until stopped.

Controllers come from factories: each `ControllerFactory` takes the `ServeContext` (cluster,
clock, HTTP client, options) and returns the step controllers it wants registered in the
`Manager`. The Rollout and AnalysisRun controllers are always on; another loop (the GitOps
sync engine's `--apps`) adds a factory to `FACTORIES` and reads its flag from
`ServeContext.options`.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import httpx2
import typer

from headway.cli.runtime import running_pid
from headway.clock import Clock, SystemClock
from headway.cluster.local.runtime import RuntimePaths, read_runtime_info
from headway.cluster.local.store import LocalCluster
from headway.cluster.protocol import Cluster, Obj
from headway.controllers.analysis import AnalysisController
from headway.controllers.leader_lock import LeadershipHeld, StateDirLock
from headway.controllers.manager import Manager, ObjectKey, StepController
from headway.controllers.rollout import RolloutController
from headway.providers.registry import default_registry

if TYPE_CHECKING:
    from headway.source.git import GitCache

__all__ = ["FACTORIES", "ControllerFactory", "ServeContext", "build_manager", "register"]

ARGO_API = "argoproj.io/v1alpha1"


@dataclass(frozen=True)
class ServeContext:
    cluster: Cluster
    clock: Clock
    http: httpx2.AsyncClient
    options: Mapping[str, Any] = field(default_factory=dict)

    @cached_property
    def git(self) -> GitCache:
        """The one Git cache of this process (`<state_dir>/git-cache`), shared by the
        Application and Git-convergence controllers, with credentials from the store's Argo CD
        repository Secrets (`argocd` namespace)."""
        from headway.controllers.repo_credentials import RepoCredentialsProvider
        from headway.source.git import GitCache

        state_dir = Path(str(self.options.get("state_dir") or ".headway"))
        provider = RepoCredentialsProvider(self.cluster)
        return GitCache(state_dir / "git-cache", credentials_for=provider)


ControllerFactory = Callable[[ServeContext], Iterable[StepController]]


def _runtime_metrics_address(options: Mapping[str, Any]) -> str | None:
    """The local runtime's metrics address (`runtime.json`), the default for
    `headway.dev/traffic` metrics that leave `address` out; None when no runtime ran there."""
    state_dir = Path(str(options.get("state_dir") or ".headway"))
    return str(read_runtime_info(RuntimePaths(state_dir)).get("metricsAddress") or "") or None


class AnalysisRunSteps:
    """The analysis controller as a manager-driven step controller (one key per run)."""

    name = "analysisruns"
    watches: Sequence[tuple[str, str]] = ((ARGO_API, "AnalysisRun"),)

    def __init__(self, ctx: ServeContext) -> None:
        self._ctx = ctx
        self._controller = AnalysisController(
            providers=default_registry(
                ctx.http, ctx.clock, traffic_address=lambda: _runtime_metrics_address(ctx.options)
            ),
            clock=ctx.clock,
        )

    def keys_for(self, obj: Obj) -> Iterable[ObjectKey]:
        meta = obj.get("metadata") or {}
        return [ObjectKey(str(meta.get("namespace") or "default"), str(meta.get("name")))]

    async def step(self, key: ObjectKey) -> float | None:
        return await self._controller.step(
            self._ctx.cluster, key.namespace, key.name, self._ctx.clock.now()
        )


def _rollouts(ctx: ServeContext) -> Iterable[StepController]:
    return [RolloutController(ctx.cluster, ctx.clock)]


def _analysis(ctx: ServeContext) -> Iterable[StepController]:
    return [AnalysisRunSteps(ctx)]


def _applications(ctx: ServeContext) -> Iterable[StepController]:
    from headway.cli.app_serve import application_controllers  # imports ServeContext

    return application_controllers(ctx)


def _git_convergence(ctx: ServeContext) -> Iterable[StepController]:
    from headway.controllers.convergence import ConvergenceController

    return [ConvergenceController(ctx.cluster, ctx.clock, git=ctx.git)]


FACTORIES: list[ControllerFactory] = [_rollouts, _analysis, _applications, _git_convergence]


def build_manager(
    ctx: ServeContext, factories: Sequence[ControllerFactory] = (), *, resync: float = 30.0
) -> Manager:
    manager = Manager(ctx.cluster, ctx.clock, resync_seconds=resync)
    for factory in factories or FACTORIES:
        for controller in factory(ctx):
            manager.register(controller)
    return manager


def _leading(state_dir: Path, clock: Clock) -> StateDirLock:
    """The state directory's leader lock, taken; a second serve there stops with one line
    naming the one that runs."""
    lock = StateDirLock(state_dir, now=clock.now())
    try:
        lock.acquire()
    except LeadershipHeld as held:
        print(
            f"error: another `headway serve` is running on state directory {state_dir} "
            f"({held.holder}); stop it first, or use another --state-dir",
            file=sys.stderr,
        )
        raise SystemExit(1) from None
    return lock


async def serve(state_dir: Path, options: Mapping[str, Any]) -> None:
    clock = SystemClock()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    state_dir.mkdir(parents=True, exist_ok=True)
    with _leading(state_dir, clock), LocalCluster(RuntimePaths(state_dir).db, clock) as cluster:
        async with httpx2.AsyncClient() as http:
            try:
                manager = build_manager(ServeContext(cluster, clock, http, options))
            except OSError as err:  # e.g. the --metrics-port is taken
                port = options.get("metrics_port")
                hint = f" (--metrics-port {port})" if port else ""
                print(f"error: cannot start the controllers{hint}: {err}", file=sys.stderr)
                raise SystemExit(1) from None
            names = ", ".join(manager.controllers)
            print(f"serving {names} (pid {os.getpid()}, state {state_dir})", flush=True)
            if running_pid(RuntimePaths(state_dir)) is None:
                # Allowed (the runtime may come later), but a wrong --state-dir looks the same.
                print(
                    f"note: no local runtime is running with state {state_dir}: Pods will not "
                    "start until `headway runtime up` runs there",
                    file=sys.stderr,
                    flush=True,
                )
            await manager.run(stop)


def _namespace_patterns(text: str) -> list[str]:
    """`--app-namespaces`: comma-separated globs or `/regex/`; a regex that does not compile
    is a usage error rather than a pattern that silently matches nothing."""
    patterns = [p.strip() for p in text.split(",") if p.strip()]
    for pattern in patterns:
        if len(pattern) > 1 and pattern.startswith("/") and pattern.endswith("/"):
            try:
                re.compile(pattern[1:-1])
            except re.error as err:
                raise typer.BadParameter(
                    f"{pattern}: not a regular expression ({err})", param_hint="--app-namespaces"
                ) from None
    return patterns


def register(app: typer.Typer) -> None:
    @app.command("serve")
    def serve_command(
        *,
        state_dir: Annotated[
            Path, typer.Option("--state-dir", file_okay=False, help="Runtime state directory.")
        ] = Path(".headway"),
        apps: Annotated[
            Path | None,
            typer.Option(
                "--apps", exists=True, help="A file or directory of Applications/AppProjects."
            ),
        ] = None,
        app_poll_seconds: Annotated[
            float, typer.Option("--app-poll-seconds", min=0.0, help="Git polling interval.")
        ] = 180.0,
        metrics_port: Annotated[
            int,
            typer.Option(
                "--metrics-port",
                min=0,
                max=65535,
                help="Serve /metrics on 127.0.0.1:PORT (0: not served).",
            ),
        ] = 0,
        health_scripts: Annotated[
            Path | None,
            typer.Option(
                "--health-scripts",
                exists=True,
                file_okay=False,
                help="Lua health overrides: <group>/<Kind>/health.lua.",
            ),
        ] = None,
        app_namespaces: Annotated[
            str,
            typer.Option(
                "--app-namespaces",
                help=(
                    "Namespaces besides argocd whose Applications are served, comma-separated "
                    "globs or /regex/ (Argo CD's application.namespaces); each app's project "
                    "must also list its namespace in sourceNamespaces."
                ),
            ),
        ] = "",
    ) -> None:
        """Run the controllers (Rollouts, AnalysisRuns, Applications) until SIGTERM or Ctrl-C.

        One serve per state directory: a second one there exits 1 naming the running one.
        """
        options = {
            "state_dir": str(state_dir),
            "apps": str(apps) if apps else "",
            "app_poll_seconds": app_poll_seconds,
            "metrics_port": metrics_port,
            "health_scripts": str(health_scripts) if health_scripts else "",
            "app_namespaces": _namespace_patterns(app_namespaces),
        }
        asyncio.run(serve(state_dir, options))
