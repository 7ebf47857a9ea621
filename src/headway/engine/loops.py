"""How each loop's controllers are built from the engine's parts (`LoopParts`).

One builder per `Loop`; each returns the step controllers the manager runs for it. Builders
may do start-up I/O: the Application loop publishes `settings.apps` once (so the manager's
first watch sees them) and starts its `/metrics` server.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import httpx2
from prometheus_client import start_http_server
from prometheus_client.registry import CollectorRegistry

from headway.clock import Clock
from headway.cluster.errors import ClusterError
from headway.cluster.protocol import Cluster
from headway.controllers.analysis.controller import AnalysisController
from headway.controllers.app.charts_in_use import chart_versions_in_use
from headway.controllers.app.controller import ApplicationController
from headway.controllers.app.definitions import DEFAULT_APPS_NAMESPACE, DefinitionsWatcher
from headway.controllers.app.diff_settings import problem_lines, read_diff_customizations
from headway.controllers.app.sources import SourceReader
from headway.controllers.app.steps import ApplicationSteps, SourceWatchSteps
from headway.controllers.appset.controller import ApplicationSetController
from headway.controllers.cluster_registry import ClusterRegistry, Connect
from headway.controllers.convergence.controller import ConvergenceController
from headway.controllers.convergence.git import open_branch
from headway.controllers.convergence.rollback import RollbackBranch
from headway.controllers.convergence.rollback_outbox import RollbackOutbox
from headway.controllers.manager import ObjectKey, StepController
from headway.controllers.multicluster.controller import MultiClusterRolloutController
from headway.controllers.notifications.controller import (
    AppNotifications,
    EventNotifications,
    Notifications,
)
from headway.controllers.object_metrics import ObjectMetrics, ObjectMetricsSteps
from headway.controllers.repo_credentials import RepoCredentialsProvider
from headway.controllers.rollout.controller import RolloutController
from headway.controllers.rollout.experiments import ExperimentController
from headway.controllers.sharding import Shards
from headway.decisions import DecisionJournal, NullJournal
from headway.engine.settings import EngineSettings, Loop
from headway.health import HealthRegistry, default_registry
from headway.health.overrides import read_script_tree, scripts_from_configmap
from headway.model.argocd_cm import unread_keys
from headway.model.obj import Obj
from headway.promotion import record as promotion_record
from headway.promotion.controller import PromotionController
from headway.promotion.environments import PipelineResolver
from headway.providers.registry import default_registry as default_providers
from headway.source.chart_cache import ChartVersionKey, KeepVersions
from headway.source.git import GitCache
from headway.source.git_commits import BotIdentity
from headway.source.helm_repo import HelmCharts
from headway.source.plugins import load_plugins
from headway.state_dir import RuntimePaths, read_runtime_info

__all__ = ["BUILDERS", "AnalysisRunSteps", "LoopParts", "health_registry"]

ARGO_API = "argoproj.io/v1alpha1"


@dataclass(frozen=True)
class LoopParts:
    """What every loop is built from: the store, the clock, one HTTP client, one Git cache,
    the one metrics registry that `/metrics` serves, and the destination clusters
    (the store itself as in-cluster, and those cluster Secrets register, reached by
    `connect`)."""

    cluster: Cluster
    clock: Clock
    http: httpx2.AsyncClient
    git: GitCache
    settings: EngineSettings
    registry: CollectorRegistry = field(default_factory=CollectorRegistry)
    connect: Connect | None = None
    journal: DecisionJournal = field(default_factory=NullJournal)
    clusters: ClusterRegistry = field(init=False)

    def __post_init__(self) -> None:
        clusters = ClusterRegistry(self.cluster, connect=self.connect, clock=self.clock,
                                   namespace=DEFAULT_APPS_NAMESPACE)
        object.__setattr__(self, "clusters", clusters)


def runtime_metrics_address(state_dir: Path) -> str | None:
    """The local runtime's metrics address (`runtime.json`), the default for
    `headway.dev/traffic` metrics that leave `address` out; None when no runtime ran there."""
    return str(read_runtime_info(RuntimePaths(state_dir)).get("metricsAddress") or "") or None


class AnalysisRunSteps:
    """The analysis controller as a manager-driven step controller (one key per run)."""

    name = "analysisruns"
    watches: Sequence[tuple[str, str]] = ((ARGO_API, "AnalysisRun"),)

    def __init__(self, parts: LoopParts) -> None:
        self._cluster = parts.cluster
        self._clock = parts.clock
        state_dir = parts.settings.state_dir
        self._controller = AnalysisController(
            providers=default_providers(
                parts.http, parts.clock, traffic_address=lambda: runtime_metrics_address(state_dir)
            ),
            clock=parts.clock,
            journal=parts.journal,
        )

    def keys_for(self, obj: Obj) -> Iterable[ObjectKey]:
        meta = obj.get("metadata") or {}
        return [ObjectKey(str(meta.get("namespace") or "default"), str(meta.get("name")))]

    async def step(self, key: ObjectKey) -> float | None:
        return await self._controller.step(
            self._cluster, key.namespace, key.name, self._clock.now()
        )


def health_registry(
    cluster: Cluster, scripts_dir: Path | None, *, clock: Clock | None = None
) -> HealthRegistry:
    """Built-in health checks, overridden by the Lua scripts of `argocd-cm` (in the store's
    `argocd` namespace, read at start) and then of `scripts_dir`
    (`<group>/<Kind>/health.lua`), as Argo CD users keep them; scripts' "now" is `clock`."""
    registry = default_registry()
    if clock is not None:
        registry = registry.with_clock(clock)
    try:
        configmap = cluster.get("v1", "ConfigMap", "argocd-cm", DEFAULT_APPS_NAMESPACE)
    except ClusterError:
        configmap = {}
    data = configmap.get("data") or {}
    for unread in unread_keys(data):
        print(f"argocd-cm: {'.'.join(unread.path)}: {unread.reason}", flush=True)
    sets = [scripts_from_configmap(data)]
    if scripts_dir is not None:
        sets.append(read_script_tree(scripts_dir))
    for found in sets:
        for problem in found.problems:
            print(f"health scripts: {problem}", flush=True)
        registry = registry.with_scripts(found.scripts)
    return registry


def _rollouts(parts: LoopParts) -> list[StepController]:
    return [
        RolloutController(parts.cluster, parts.clock),
        ExperimentController(parts.cluster, parts.clock),
    ]


def _analysis(parts: LoopParts) -> list[StepController]:
    return [AnalysisRunSteps(parts)]


def _charts_in_use(cluster: Cluster) -> KeepVersions:
    """The chart versions the cluster's Applications pin, read when the chart cache is over
    its bound; None (evict nothing) when the Applications cannot be listed."""

    def pinned() -> frozenset[ChartVersionKey] | None:
        try:
            return chart_versions_in_use(cluster.list(ARGO_API, "Application"))
        except ClusterError:
            return None

    return pinned


def _applications(parts: LoopParts) -> list[StepController]:
    settings = parts.settings
    plugins = load_plugins(
        settings.plugins_directory, timeout_seconds=settings.plugin_timeout_seconds
    )
    repositories = RepoCredentialsProvider(parts.cluster)  # `type: helm` Secrets
    charts = HelmCharts(
        settings.state_dir / "chart-cache",
        credentials_for=repositories.helm,
        options_for=repositories.helm_options,
        max_cache_bytes=settings.chart_cache_max_bytes,
        in_use=_charts_in_use(parts.cluster),
    )
    reader = SourceReader(
        git=parts.git, clock=parts.clock, poll_seconds=settings.app_poll_seconds,
        plugins=plugins, charts=charts,
    )
    for line in problem_lines(read_diff_customizations(parts.cluster)):
        print(line, flush=True)
    controller = ApplicationController(
        store=parts.cluster,
        clusters=parts.clusters,
        sources=reader,
        clock=parts.clock,
        health=health_registry(parts.cluster, settings.health_scripts, clock=parts.clock),
        poll_seconds=settings.app_poll_seconds,
        control_namespace=DEFAULT_APPS_NAMESPACE,
        app_namespaces=list(settings.app_namespaces),
        journal=parts.journal,
        shards=Shards(settings.shard, settings.shards) if settings.shards > 1 else None,
        announce=_print_line,  # argocd-cm's problems again at each changed reading
    )
    if settings.apps is not None:  # publish once now, so the manager's first watch sees them
        for problem in DefinitionsWatcher(settings.apps).sync(parts.cluster) or []:
            print(f"--apps {settings.apps}: {problem}", flush=True)
    parts.registry.register(controller.metrics)
    if settings.metrics_port:  # serves what later loops register in parts.registry too
        start_http_server(
            settings.metrics_port, addr=settings.metrics_address, registry=parts.registry
        )
    steps = ApplicationSteps(controller, parts.cluster, apps_namespace=DEFAULT_APPS_NAMESPACE)
    sources = SourceWatchSteps(controller, reader, parts.cluster, apps_path=settings.apps)
    sources.watches = (("v1", "Namespace"), (ARGO_API, "Application"))
    return [steps, sources]


def _git_convergence(parts: LoopParts) -> list[StepController]:
    identity = BotIdentity("Headway", "headway@localhost")

    def branches(url: str, revision: str) -> RollbackBranch:
        return open_branch(parts.git, url, revision, identity)

    return [
        ConvergenceController(parts.cluster, parts.clock, git=parts.git),
        RollbackOutbox(parts.cluster, parts.clock, open_branch=branches),
    ]


def _notifications(parts: LoopParts) -> list[StepController]:
    core = Notifications(
        cluster=parts.cluster, clock=parts.clock, http=parts.http,
        state_dir=parts.settings.state_dir, registry=parts.registry,
    )
    return [AppNotifications(core), EventNotifications(core)]


def _metrics(parts: LoopParts) -> list[StepController]:
    metrics = ObjectMetrics(parts.clock)
    parts.registry.register(metrics)
    kinds = ("Application", "Rollout", "AnalysisRun", "ApplicationSet")
    steps = [ObjectMetricsSteps(parts.cluster, metrics, kind) for kind in kinds]
    promotions = ObjectMetricsSteps(parts.cluster, metrics, promotion_record.KIND,
                                    api_version=promotion_record.API_VERSION)
    return [*steps, promotions]


def _promotions(parts: LoopParts) -> list[StepController]:
    resolver = PipelineResolver(
        parts.cluster, git=parts.git, forge_policy=parts.settings.forge_policy
    )

    def destination(app: Obj) -> Cluster:
        where = (app.get("spec") or {}).get("destination") or {}
        return parts.clusters.resolve(server=where.get("server"), name=where.get("name")).cluster

    return [
        PromotionController(parts.cluster, parts.clock, resolve=resolver, destination=destination)
    ]


def _applicationsets(parts: LoopParts) -> list[StepController]:
    controller = ApplicationSetController(
        cluster=parts.cluster, clock=parts.clock, git=parts.git,
        namespace=DEFAULT_APPS_NAMESPACE, poll_seconds=parts.settings.app_poll_seconds,
        forge_policy=parts.settings.forge_policy,
    )
    return [controller]


def _multicluster_rollouts(parts: LoopParts) -> list[StepController]:
    return [MultiClusterRolloutController(parts.cluster, clusters=parts.clusters,
                                          clock=parts.clock, git=parts.git)]


BUILDERS: Mapping[Loop, Callable[[LoopParts], list[StepController]]] = {
    Loop.ROLLOUTS: _rollouts,
    Loop.ANALYSIS: _analysis,
    Loop.APPLICATIONS: _applications,
    Loop.GIT_CONVERGENCE: _git_convergence,
    Loop.NOTIFICATIONS: _notifications,
    Loop.METRICS: _metrics,
    Loop.PROMOTIONS: _promotions,
    Loop.APPLICATIONSETS: _applicationsets,
    Loop.MULTICLUSTER_ROLLOUTS: _multicluster_rollouts,
}


def _print_line(line: str) -> None:
    print(line, flush=True)
