"""The Application controller's part of `headway serve`: a controller factory.

Options read from `ServeContext.options`: `apps` (a file or directory of Application and
AppProject manifests to publish), `state_dir` (the shared Git cache, `ctx.git`, lives under it),
`app_poll_seconds` (Git polling interval, Argo CD's 3 minutes by default) and
`metrics_port` (serve `/metrics` of the Application controller there; 0 = off) and
`health_scripts` (a directory of Lua health overrides) and `app_namespaces` (patterns of
the namespaces besides `argocd` whose Applications are served).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from prometheus_client import start_http_server

from headway.cluster.errors import ClusterError
from headway.cluster.protocol import Cluster
from headway.controllers.app_definitions import DEFAULT_APPS_NAMESPACE, DefinitionsWatcher
from headway.controllers.app_sources import DEFAULT_POLL_SECONDS, SourceReader
from headway.controllers.app_steps import ApplicationSteps, SourceWatchSteps
from headway.controllers.application import ApplicationController
from headway.controllers.cluster_registry import ClusterRegistry
from headway.controllers.manager import StepController
from headway.health import HealthRegistry, default_registry
from headway.health.overrides import read_script_tree, scripts_from_configmap

if TYPE_CHECKING:
    from headway.cli.serve import ServeContext

__all__ = ["application_controllers", "health_registry"]


def health_registry(cluster: Cluster, scripts_dir: object) -> HealthRegistry:
    """Built-in health checks, overridden by the Lua scripts of `argocd-cm` (in the store's
    `argocd` namespace, read at start) and then of `--health-scripts DIR`
    (`<group>/<Kind>/health.lua`), as Argo CD users keep them."""
    registry = default_registry()
    try:
        configmap = cluster.get("v1", "ConfigMap", "argocd-cm", DEFAULT_APPS_NAMESPACE)
    except ClusterError:
        configmap = {}
    sets = [scripts_from_configmap(configmap.get("data") or {})]
    if scripts_dir:
        sets.append(read_script_tree(Path(str(scripts_dir))))
    for found in sets:
        for problem in found.problems:
            print(f"health scripts: {problem}", flush=True)
        registry = registry.with_scripts(found.scripts)
    return registry


def application_controllers(ctx: ServeContext) -> Iterable[StepController]:
    options = ctx.options
    apps = options.get("apps")
    apps_path = Path(str(apps)) if apps else None
    poll = float(options.get("app_poll_seconds") or DEFAULT_POLL_SECONDS)
    reader = SourceReader(git=ctx.git, clock=ctx.clock, poll_seconds=poll)
    controller = ApplicationController(
        store=ctx.cluster,
        clusters=ClusterRegistry(ctx.cluster),
        sources=reader,
        clock=ctx.clock,
        health=health_registry(ctx.cluster, options.get("health_scripts")),
        poll_seconds=poll,
        control_namespace=DEFAULT_APPS_NAMESPACE,
        app_namespaces=[str(n) for n in options.get("app_namespaces") or ()],
    )
    if apps_path is not None:  # publish once now, so the manager's first watch sees them
        for problem in DefinitionsWatcher(apps_path).sync(ctx.cluster) or []:
            print(f"--apps {apps_path}: {problem}", flush=True)
    port = int(options.get("metrics_port") or 0)
    if port:
        start_http_server(port, addr="127.0.0.1", registry=controller.metrics.registry)
    steps = ApplicationSteps(controller, ctx.cluster, apps_namespace=DEFAULT_APPS_NAMESPACE)
    sources = SourceWatchSteps(controller, reader, ctx.cluster, apps_path=apps_path)
    sources.watches = (("v1", "Namespace"), ("argoproj.io/v1alpha1", "Application"))
    return [steps, sources]
