"""`headway runtime up|down|status`: the local runtime daemon."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Annotated

import typer

from headway.cli.help_paragraphs import one_line_paragraphs
from headway.state_dir import RuntimePaths, read_runtime_info
from headway.state_lock import LockHeld, holder_of

# The runtime, its store, the mesh, asyncio and logging load inside the commands that use them,
# not for --help (importing `headway.cluster.local` at all opens the store's module).

runtime_app = typer.Typer(
    help="The local runtime: Pods as processes, Services as local ports.", no_args_is_help=True
)

StateDir = Annotated[Path, typer.Option("--state-dir", help="Runtime state directory.")]
DEFAULT_STATE = Path(".headway")


def running_pid(paths: RuntimePaths) -> int | None:
    """The running runtime's pid: it holds the state directory's lock (so a pidfile left by
    a killed runtime, its pid since reused, is not mistaken for one) and is ready."""
    from headway.cluster.local.kubelet.processes import process_alive

    if holder_of(paths.lock) is None:
        return None
    try:
        pid = int(paths.pidfile.read_text().strip())
    except (OSError, ValueError):
        return None
    return pid if process_alive(pid) else None


def _foreground(state_dir: Path, config: Path | None, api_port: int) -> None:
    import asyncio
    import logging

    from headway.clock import SystemClock
    from headway.cluster.local.api.kubeapi.server import ApiServerError
    from headway.cluster.local.kubelet.images import RuntimeConfigError
    from headway.cluster.local.runtime import Runtime
    from headway.local_mesh.planes import RouterPlanes

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop.set)
        runtime = Runtime(
            state_dir=state_dir,
            clock=SystemClock(),
            config_path=config,
            data_planes=RouterPlanes(),
            api_port=api_port,
        )
        await runtime.run(stop, ready=lambda: print(f"runtime up (pid {os.getpid()})", flush=True))

    try:
        asyncio.run(main())
    except (RuntimeConfigError, ApiServerError) as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(2) from None
    except LockHeld as held:
        typer.echo(
            f"error: another runtime is running on state directory {state_dir} ({held.holder})",
            err=True,
        )
        raise typer.Exit(1) from None


@runtime_app.command("up")
def up(
    state_dir: StateDir = DEFAULT_STATE,
    foreground: Annotated[bool, typer.Option("--foreground", help="Run in this process.")] = False,
    config: Annotated[
        Path | None,
        typer.Option("--config", exists=True, dir_okay=False, help="Runtime config (image map)."),
    ] = None,
    api_port: Annotated[
        int,
        typer.Option(
            "--api-port", min=0, max=65535,
            help="Port of the Kubernetes API on 127.0.0.1 (0: any free port; "
            "`headway runtime kubeconfig` names it).",
        ),
    ] = 0,
) -> None:
    """Start the runtime (in the background unless --foreground; one per state directory,
    held by the lock runtime.lock); it also serves the Kubernetes API on 127.0.0.1
    (`headway runtime kubeconfig` for kubectl)."""
    if state_dir.exists() and not state_dir.is_dir():
        raise typer.BadParameter(f"{state_dir} is not a directory", param_hint="'--state-dir'")
    paths = RuntimePaths(state_dir)
    pid = running_pid(paths)
    if pid is not None:
        # A different --config or --api-port would be silently ignored otherwise.
        given = [flag for flag, value in (("--config", config), ("--api-port", api_port))
                 if value]
        note = (f"; {' and '.join(given)} {'are' if len(given) > 1 else 'is'} read at start: "
                "`headway runtime down` first") if given else ""
        typer.echo(f"runtime already running (pid {pid}, state {state_dir}){note}")
        return
    if foreground:
        _foreground(state_dir, config, api_port)
        return
    _start_in_background(paths, config, api_port)


def _start_in_background(paths: RuntimePaths, config: Path | None, api_port: int) -> None:
    """Start `runtime up --foreground` detached; wait until it has written its pidfile."""
    paths.state_dir.mkdir(parents=True, exist_ok=True)
    argv = [
        sys.executable,
        "-m",
        "headway",
        "runtime",
        "up",
        "--foreground",
        "--state-dir",
        str(paths.state_dir),
        "--api-port",
        str(api_port),
    ]
    if config is not None:
        argv += ["--config", str(config)]
    offset = paths.log.stat().st_size if paths.log.exists() else 0
    with open(paths.log, "ab") as log:
        child = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True
        )
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if child.poll() is not None:
            output = paths.log.read_bytes()[offset:].decode(errors="replace").strip()
            typer.echo(output or f"error: the runtime exited with {child.returncode}", err=True)
            raise typer.Exit(child.returncode if child.returncode > 0 else 1)  # 2: bad config
        if running_pid(paths) == child.pid:
            typer.echo(f"runtime up (pid {child.pid}, state {paths.state_dir})")
            return
        time.sleep(0.1)
    typer.echo(f"error: the runtime did not start within 15s; see {paths.log}", err=True)
    raise typer.Exit(1)


def _lock_holder_pid(paths: RuntimePaths) -> int | None:
    """The pid of a runtime that holds the lock but has no pidfile (still starting, or its
    pidfile was removed): `down` stops it all the same."""
    from headway.cluster.local.kubelet.processes import process_alive

    holder = holder_of(paths.lock)
    return holder.pid if holder is not None and holder.pid and process_alive(holder.pid) else None


@runtime_app.command("down")
def down(state_dir: StateDir = DEFAULT_STATE) -> None:
    """Stop the runtime and every process it started; verify none remain."""
    from headway.cluster.local.kubelet.processes import (
        find_marked_processes,
        kill_marked_processes,
        process_alive,
    )
    from headway.local_mesh.planes import stop_leftover_routers

    paths = RuntimePaths(state_dir)
    pid = running_pid(paths) or _lock_holder_pid(paths)
    if pid is not None:
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 30
        while process_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        if process_alive(pid):
            os.kill(pid, signal.SIGKILL)
    runtime_id = str(read_runtime_info(paths).get("runtimeId") or "")
    leftovers = kill_marked_processes(runtime_id) if runtime_id else []
    leftovers += stop_leftover_routers(paths.state_dir / "mesh")  # HAProxy of a killed daemon
    remaining = find_marked_processes(runtime_id) if runtime_id else []
    paths.pidfile.unlink(missing_ok=True)
    if remaining:
        typer.echo(f"error: processes still running: {remaining}", err=True)
        raise typer.Exit(1)
    note = f"; killed {len(leftovers)} leftover process(es)" if leftovers else ""
    typer.echo(("runtime stopped" if pid else "runtime was not running") + note)


@runtime_app.command("status")
def status(state_dir: StateDir = DEFAULT_STATE) -> None:
    """Whether the runtime runs, where its state is, and what it hosts."""
    paths = RuntimePaths(state_dir)
    pid = running_pid(paths)
    typer.echo(f"runtime: {'running (pid ' + str(pid) + ')' if pid else 'stopped'}")
    typer.echo(f"state:   {state_dir.resolve()}")
    typer.echo(f"store:   {paths.db.resolve()}")
    if pid and read_runtime_info(paths).get("apiAddress"):
        typer.echo(f"api:     http://{read_runtime_info(paths)['apiAddress']}"
                   " (`headway runtime kubeconfig`)")
    if pid and read_runtime_info(paths).get("metricsAddress"):
        typer.echo(f"metrics: http://{read_runtime_info(paths)['metricsAddress']}/metrics")
    if not paths.db.exists():
        return
    if not pid:
        # The store keeps the last statuses: say that nothing listens, or "Running" misleads.
        typer.echo(
            "(as recorded when it stopped: no Pod runs and no address below answers;"
            " `headway runtime up` starts them again)"
        )
    from headway.clock import SystemClock
    from headway.cluster.local.api.store import LocalCluster
    from headway.cluster.local.services.proxies import service_ports

    with LocalCluster(paths.db, SystemClock()) as cluster:
        for kind, api in (
            ("Deployment", "apps/v1"),
            ("ReplicaSet", "apps/v1"),
            ("Job", "batch/v1"),
            ("Service", "v1"),
        ):
            typer.echo(f"{kind + 's:':<13}{len(cluster.list(api, kind))}")
        phases = Counter(
            str((p.get("status") or {}).get("phase", "Pending")) for p in cluster.list("v1", "Pod")
        )
        summary = ", ".join(f"{n} {phase}" for phase, n in sorted(phases.items())) or "none"
        typer.echo(f"{'Pods:':<13}{summary}")
        for svc in cluster.list("v1", "Service"):
            ports = ", ".join(f"127.0.0.1:{p}" for p in service_ports(svc)) or "(no address yet)"
            meta = svc["metadata"]
            typer.echo(f"  service {meta.get('namespace', 'default')}/{meta['name']}: {ports}")
        for vs in cluster.list("networking.istio.io/v1beta1", "VirtualService"):
            meta = vs["metadata"]
            address = (meta.get("annotations") or {}).get("headway.dev/address") or "(none yet)"
            where = f"{meta.get('namespace', 'default')}/{meta['name']}"
            typer.echo(f"  virtualservice {where}: {address}")


@runtime_app.command("kubeconfig")
@one_line_paragraphs
def kubeconfig(state_dir: StateDir = DEFAULT_STATE) -> None:
    """Print a kubeconfig for the running runtime's Kubernetes API (context headway-local).

    Use it as `KUBECONFIG=<(headway runtime kubeconfig) kubectl get pods`, or save it to a
    file. The API listens on 127.0.0.1 only, over plain HTTP, with no authentication.
    """
    paths = RuntimePaths(state_dir)
    address = read_runtime_info(paths).get("apiAddress") if running_pid(paths) else None
    if not address:
        typer.echo(f"error: no runtime serves a Kubernetes API in {state_dir}; start one "
                   "with `headway runtime up`", err=True)
        raise typer.Exit(1)
    typer.echo(kubeconfig_text(f"http://{address}"), nl=False)


def kubeconfig_text(server: str) -> str:
    return (
        "apiVersion: v1\n"
        "kind: Config\n"
        "clusters:\n"
        "- name: headway-local\n"
        "  cluster:\n"
        f"    server: {server}\n"
        "users:\n"
        "- name: headway-local\n"
        "  user: {}\n"
        "contexts:\n"
        "- name: headway-local\n"
        "  context:\n"
        "    cluster: headway-local\n"
        "    user: headway-local\n"
        "    namespace: default\n"
        "current-context: headway-local\n"
    )


def register(app: typer.Typer) -> None:
    app.add_typer(runtime_app, name="runtime")
