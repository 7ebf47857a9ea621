"""`headway serve`: run the engine's controllers against the local runtime's store (or a
Kubernetes API with `--kubeconfig`) until stopped.

The wiring is `headway.engine` (docs/embedding.md); this command turns its flags into
`EngineSettings`, opens the store, takes the state directory's leader lock and runs the
engine until SIGTERM or Ctrl-C.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from headway.cli.help_paragraphs import one_line_paragraphs
from headway.cli.plugin_options import (
    DEFAULT_PLUGIN_TIMEOUT_SECONDS,
    PluginsDirOption,
    PluginTimeoutOption,
    load_catalog,
)
from headway.cli.targets import Context, InCluster, Kubeconfig, Target, open_target

# The engine (every controller), the HTTP client and the store load when serving starts, not
# for --help.
if TYPE_CHECKING:
    import asyncio

    from headway.appset.forge_policy import ForgePolicy
    from headway.clock import Clock
    from headway.cluster.protocol import Cluster
    from headway.controllers.leader_lock import StateDirLock
    from headway.engine import Engine, EngineSettings

__all__ = ["CHART_CACHE_MAX_MIB", "register"]

# `headway.source.chart_cache.DEFAULT_MAX_BYTES` in MiB, kept here so that --help does not
# import the chart cache; a test holds the two equal.
CHART_CACHE_MAX_MIB = 1024


def _leading(state_dir: Path, clock: Clock) -> StateDirLock:
    """The state directory's leader lock, taken; a second serve there stops with one line
    naming the one that runs."""
    from headway.controllers.leader_lock import LeadershipHeld, StateDirLock

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


@dataclass(frozen=True)
class UiSettings:
    """Where the dashboard listens (`--ui-port`, `--ui-address`); port 0: not served."""

    port: int = 0
    address: str = "127.0.0.1"


async def serve(
    settings: EngineSettings,
    target: Target | None = None,
    ui: UiSettings | None = None,
    *,
    tune_gc: bool = True,
) -> None:
    """Serve until SIGTERM or Ctrl-C; `tune_gc`: under the garbage collector policy
    (controllers/collector_policy.py), else CPython's defaults (`--no-tune-gc`)."""
    import asyncio

    from headway.cli.serve_lease import keep_leading, lead, lease_name
    from headway.clock import SystemClock
    from headway.controllers.lease_lock import LeaseSettings

    clock = SystemClock()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    state_dir = settings.state_dir
    state_dir.mkdir(parents=True, exist_ok=True)
    target = target or Target(state_dir)
    lease_settings = LeaseSettings(name=lease_name(settings.shard, settings.shards))
    with _leading(state_dir, clock), open_target(target, need_store=False) as cluster:
        lease = await lead(cluster, clock, stop, lease_settings) if target.is_kubernetes else None
        if target.is_kubernetes and lease is None:
            return  # stopped while a standby
        lost = asyncio.Event()
        renewing = asyncio.create_task(keep_leading(lease, stop, lost)) if lease else None
        try:
            await _run_engine(settings, target, cluster, clock, stop, ui=ui or UiSettings(),
                              tune_gc=tune_gc)
        finally:
            if renewing is not None and lease is not None:
                stop.set()
                await renewing
                lease.release()
        if lost.is_set():
            raise SystemExit(1)


async def _run_engine(settings: EngineSettings, target: Target, cluster: Cluster,
                      clock: Clock, stop: asyncio.Event, *, ui: UiSettings,
                      tune_gc: bool) -> None:
    import httpx2

    from headway.cli.runtime import running_pid
    from headway.controllers.collector_policy import CollectorPolicy
    from headway.engine import Engine
    from headway.state_dir import RuntimePaths

    state_dir = settings.state_dir
    async with httpx2.AsyncClient() as http:
        try:
            engine = Engine(cluster=cluster, clock=clock, http=http, settings=settings)
        except OSError as err:  # e.g. the --metrics-port is taken
            port = settings.metrics_port
            hint = f" (--metrics-port {port})" if port else ""
            print(f"error: cannot start the controllers{hint}: {err}", file=sys.stderr)
            raise SystemExit(1) from None
        names = ", ".join(engine.controllers)
        where = f"state {state_dir}" + (", Kubernetes API" if target.is_kubernetes else "")
        if settings.shards > 1:
            where += f", shard {settings.shard} of {settings.shards}"
        print(f"serving {names} (pid {os.getpid()}, {where})", flush=True)
        if not target.is_kubernetes and running_pid(RuntimePaths(state_dir)) is None:
            # Allowed (the runtime may come later), but a wrong --state-dir looks the same.
            print(
                f"note: no local runtime is running with state {state_dir}: Pods will not "
                "start until `headway runtime up` runs there",
                file=sys.stderr,
                flush=True,
            )
        try:
            async with _dashboard(ui, engine, cluster, clock, state_dir):
                await engine.run(stop, collector=CollectorPolicy() if tune_gc else None)
        finally:
            engine.close()


@contextlib.asynccontextmanager
async def _dashboard(
    ui: UiSettings, engine: Engine, cluster: Cluster, clock: Clock, state_dir: Path
) -> AsyncIterator[None]:
    """The dashboard next to the engine when `--ui-port` asks for it; its URL printed, and
    its token too the one time it is made."""
    if not ui.port:
        yield
        return
    from headway.dashboard.server import DashboardServer, is_loopback

    if not is_loopback(ui.address):
        print(
            f"warning: the dashboard listens on {ui.address}: whoever reaches it reads every "
            "application and rollout (reading needs no login), and the token and session "
            "cross the network in clear unless a TLS proxy is in front",
            file=sys.stderr,
            flush=True,
        )
    try:
        server = DashboardServer(
            cluster=cluster, clock=clock, state_dir=state_dir, address=ui.address,
            port=ui.port, git=engine.git,
        )
    except (OSError, ValueError) as err:  # the token file is unreadable or damaged
        print(f"error: cannot start the dashboard: {err}", file=sys.stderr)
        raise SystemExit(1) from None
    try:
        started = await server.start()
    except (OSError, SystemExit) as err:
        print(f"error: cannot start the dashboard (--ui-port {ui.port}): {err}", file=sys.stderr)
        raise SystemExit(1) from None
    print(f"dashboard at {started.url}", flush=True)
    if started.new_token:
        print(
            f"dashboard token (shown this once; only its hash is kept, in {started.token_file}):"
            f" {started.new_token}",
            flush=True,
        )
    try:
        yield
    finally:
        await server.stop()


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


def _forge_policy(*, enabled: bool, allowed: list[str], strict: bool) -> ForgePolicy:
    """The ApplicationSet forge policy of the flags; a URL that cannot be an API root is a
    usage error naming it."""
    from headway.appset.forge_policy import ForgePolicy

    urls = tuple(u.strip() for text in allowed for u in text.split(",") if u.strip())
    try:
        return ForgePolicy(enabled=enabled, allowed_api_urls=urls, token_ref_strict=strict)
    except ValueError as err:
        raise typer.BadParameter(str(err), param_hint="--allowed-scm-providers") from None


def _own_shard(shard: int | None, shards: int, *, kubernetes: bool) -> int:
    """`--shard`, or the ordinal ending the replica's name; a usage error when neither
    gives one of the `--shards`, or when shards are asked for without a Kubernetes API (the
    local store is one machine's: one serve per state directory)."""
    if shards == 1:
        if shard:
            raise typer.BadParameter(f"shard {shard} of 1 shard", param_hint="--shard")
        return 0
    if not kubernetes:
        raise typer.BadParameter(
            "shards run as replicas against a Kubernetes API: add --kubeconfig, --context or"
            " --in-cluster", param_hint="--shards")
    import socket

    from headway.controllers.sharding import shard_from_host_name

    host = os.environ.get("POD_NAME") or socket.gethostname()
    found = shard if shard is not None else shard_from_host_name(host)
    if found is None:
        raise typer.BadParameter(
            f"no shard given, and the replica's name {host!r} does not end in -<ordinal>",
            param_hint="--shard")
    if found >= shards:
        raise typer.BadParameter(f"shard {found} is not one of 0..{shards - 1}",
                                 param_hint="--shard")
    return found


def register(app: typer.Typer) -> None:
    @app.command("serve")
    @one_line_paragraphs
    def serve_command(
        *,
        state_dir: Annotated[
            Path, typer.Option("--state-dir", file_okay=False, help="Runtime state directory.")
        ] = Path(".headway"),
        apps: Annotated[
            Path | None,
            typer.Option(
                "--apps",
                exists=True,
                help="A file or directory of Application/AppProject manifests, one per YAML"
                " document.",
            ),
        ] = None,
        app_poll_seconds: Annotated[
            float,
            typer.Option("--app-poll-seconds", min=0.0, help="Git polling interval (0: 180)."),
        ] = 180.0,
        metrics_port: Annotated[
            int,
            typer.Option(
                "--metrics-port",
                min=0,
                max=65535,
                help="Serve /metrics on PORT of --metrics-address (0: not served).",
            ),
        ] = 0,
        metrics_address: Annotated[
            str,
            typer.Option(
                "--metrics-address",
                help="The address /metrics listens on (0.0.0.0 in a Pod, for its Service).",
            ),
        ] = "127.0.0.1",
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
        ui_port: Annotated[
            int,
            typer.Option(
                "--ui-port",
                min=0,
                max=65535,
                help="Serve the web dashboard on PORT of --ui-address (0: not served);"
                " see docs/dashboard.md.",
            ),
        ] = 0,
        ui_address: Annotated[
            str,
            typer.Option(
                "--ui-address",
                help="The address the dashboard listens on; anything but loopback is warned"
                " about (reading needs no login).",
            ),
        ] = "127.0.0.1",
        shards: Annotated[
            int,
            typer.Option(
                "--shards",
                min=1,
                envvar="HEADWAY_CONTROLLER_REPLICAS",
                help="Controller replicas sharing the destination clusters (Argo CD's "
                "ARGOCD_CONTROLLER_REPLICAS); more than 1 needs a Kubernetes API"
                " (--kubeconfig/--in-cluster). See docs/kubernetes.md.",
            ),
        ] = 1,
        shard: Annotated[
            int | None,
            typer.Option(
                "--shard",
                min=0,
                envvar="HEADWAY_CONTROLLER_SHARD",
                help="This replica's shard, 0..shards-1 (default: the ordinal ending the Pod's"
                " name, as a StatefulSet's headway-2). It reconciles only the Applications"
                " whose destination cluster it owns; other shards than 0 run only the"
                " Application loop.",
            ),
        ] = None,
        kubeconfig: Kubeconfig = None,
        context: Context = None,
        in_cluster: InCluster = False,
        plugins_dir: PluginsDirOption = None,
        plugin_timeout: PluginTimeoutOption = DEFAULT_PLUGIN_TIMEOUT_SECONDS,
        enable_scm_providers: Annotated[
            bool,
            typer.Option(
                "--enable-scm-providers/--disable-scm-providers",
                help="Run the ApplicationSet pullRequest and scmProvider generators (disabled:"
                " every set using one gets a condition and calls no forge).",
            ),
        ] = True,
        allowed_scm_providers: Annotated[
            list[str] | None,
            typer.Option(
                "--allowed-scm-providers",
                help="API URLs (comma-separated or repeated) the pullRequest and scmProvider"
                " generators and pipeline forges may call besides the public GitHub and GitLab"
                " APIs, e.g. a GitHub Enterprise https://ghe.example.com/ (same root with or"
                " without /api/v3), a GitLab https://gitlab.example.com/ (with or without"
                " /api/v4) or a Gitea https://gitea.example.com/ (every Gitea host must be"
                " listed). Default: none.",
            ),
        ] = None,
        token_ref_strict_mode: Annotated[
            bool,
            typer.Option(
                "--token-ref-strict-mode/--no-token-ref-strict-mode",
                help="Read a generator's tokenRef (a pipeline's tokenSecret) only when it is"
                " labelled argocd.argoproj.io/secret-type: scm-creds (Argo CD's default is off).",
            ),
        ] = True,
        chart_cache_max_mib: Annotated[
            int,
            typer.Option(
                "--chart-cache-max-mib",
                min=0,
                help="Bound of <state-dir>/chart-cache in MiB: past it the least recently used"
                " charts are removed, never a version an Application renders, synced or keeps"
                " in its history (docs/sources.md).",
            ),
        ] = CHART_CACHE_MAX_MIB,
        tune_gc: Annotated[
            bool,
            typer.Option(
                "--tune-gc/--no-tune-gc",
                help="Run Python's garbage collector the way a long-lived controller wants it:"
                " freeze the long-lived objects after start-up and after the first full pass"
                " (again as they grow by a quarter), and collect the young generation less"
                " often (docs/performance.md). --no-tune-gc keeps CPython's defaults.",
            ),
        ] = True,
    ) -> None:
        """Run every controller (Applications, ApplicationSets, Rollouts, analysis, promotions,
        multi-cluster rollouts, Git convergence; the dashboard with --ui-port) until SIGTERM
        or Ctrl-C.

        Rollouts include their Experiments; ApplicationSets: docs/applicationset.md;
        MultiClusterRollouts: docs/multi-cluster.md; the Git convergence reverts aborted
        rollouts and pushes rollbacks; promotions go through a pipeline's environments
        (docs/promotion.md). Also notifications in Argo's format
        (docs/notifications.md), the object metrics of /metrics (docs/metrics.md) and, with
        --ui-port, the web dashboard (docs/dashboard.md): read-only without a login; actions
        need the token printed the first time it starts on a state directory.

        Against the local runtime's store, or a Kubernetes cluster with --kubeconfig /
        --context / --in-cluster. One serve per state directory: a second one there exits 1
        naming the running one. Applications may also target other clusters, registered as
        Argo CD cluster Secrets in namespace argocd (`headway cluster add`).

        Config management plugins (Argo CD's sidecar plugin.yaml) are read from --plugins-dir,
        by default <state-dir>/plugins/<name>/plugin.yaml, and run as local processes
        (docs/sources.md).

        The ApplicationSet pullRequest and scmProvider generators and a PromotionPipeline's
        forge send a token only to the public GitHub and GitLab APIs and the
        --allowed-scm-providers URLs, and only from Secrets labelled
        argocd.argoproj.io/secret-type: scm-creds (docs/applicationset.md).
        """
        from headway.controllers.app.sources import DEFAULT_POLL_SECONDS
        from headway.engine import ALL_LOOPS, EngineSettings, Loop

        plugins = plugins_dir or state_dir / "plugins"
        load_catalog(plugins, timeout_seconds=plugin_timeout, required=plugins_dir is not None)
        target = Target(state_dir, kubeconfig, context, in_cluster)
        own_shard = _own_shard(shard, shards, kubernetes=target.is_kubernetes)
        settings = EngineSettings(
            state_dir=state_dir,
            loops=ALL_LOOPS if own_shard == 0 else frozenset({Loop.APPLICATIONS}),
            shard=own_shard,
            shards=shards,
            apps=apps,
            app_poll_seconds=app_poll_seconds or DEFAULT_POLL_SECONDS,
            metrics_port=metrics_port,
            metrics_address=metrics_address,
            health_scripts=health_scripts,
            app_namespaces=tuple(_namespace_patterns(app_namespaces)),
            plugins_dir=plugins_dir,
            plugin_timeout_seconds=plugin_timeout,
            forge_policy=_forge_policy(
                enabled=enable_scm_providers,
                allowed=allowed_scm_providers or [],
                strict=token_ref_strict_mode,
            ),
            chart_cache_max_bytes=chart_cache_max_mib * 1024 * 1024,
        )
        import asyncio

        asyncio.run(serve(settings, target, UiSettings(ui_port, ui_address), tune_gc=tune_gc))
