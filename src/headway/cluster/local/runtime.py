"""The local runtime daemon: controllers, the kubelet and the Service proxies in one process.

State directory layout (default `.headway/`):
  cluster.db      the object store (`LocalCluster`)
  runtime.lock    held (an exclusive `flock`) by the running daemon: one runtime per state
                  directory; the kernel drops it when the daemon dies, even by SIGKILL
  runtime.pid     the daemon's pid while it runs
  runtime.json    pid, runtime id, start time and the Kubernetes API address (`apiAddress`);
                  the runtime id marks every child process
  runtime.log     the daemon's own output when started in the background
  logs/NS/POD/CONTAINER.log (and .previous.log)   container output
  pods/NS/POD-UID/  each Pod's sandbox (its volumes' files)
  volumes/pvc-UID/  each PersistentVolumeClaim's data, kept across Pods until the claim goes
  mesh/           the local mesh's files (metrics port, HAProxy work dirs; docs/local-mesh.md)

Each loop step runs the Deployment, ReplicaSet, StatefulSet, DaemonSet, CronJob, Job,
HorizontalPodAutoscaler and PodDisruptionBudget controllers and the volume binder, then the
Service proxies (so a Pod leaves the endpoints before it is stopped), the kubelet, the
proxies again (so readiness changes reach the endpoints in the same step) and the Ingress
listeners, then the local mesh (when the runtime was given data planes) so VirtualService
routers follow the same endpoints.

A step runs only when something asks for one, so an idle runtime sleeps: when the store's
revision moved (read every `REVISION_POLL_SECONDS`: one counter, since other processes
write the store too), when a container exited or a probe result flipped (`wake`), when the
time a step asked for comes (a restart back-off, a probe-driven delay, a progress deadline,
a CronJob's schedule, an HPA's period: `step()` returns the earliest), and at least every
`resync_seconds` (10 s) as a safety net for anything no one announced.

With an `api_port`, the runtime also serves the Kubernetes REST API over its store on
127.0.0.1 (`headway.cluster.local.api.kubeapi`, on a thread of its own; docs/kubernetes.md).

Shutdown (SIGTERM/SIGINT): stop every container (SIGTERM, then SIGKILL after the grace
period, capped by `shutdown_grace_seconds`), close the proxies, then kill anything still
carrying this runtime's id. At start-up, leftovers of an earlier runtime in the same state
directory are killed the same way and its Pods are started afresh.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import uuid
from collections.abc import Callable
from pathlib import Path

from headway.clock import Clock
from headway.cluster.errors import ClusterError
from headway.cluster.events import record_event
from headway.cluster.local.api.kubeapi.server import ApiServer
from headway.cluster.local.api.store import LocalCluster
from headway.cluster.local.kubelet.images import (
    CONFIG_FILE_NAME,
    RuntimeConfig,
    RuntimeConfigError,
    load_runtime_config,
)
from headway.cluster.local.kubelet.node_status import register_node
from headway.cluster.local.kubelet.pods import Kubelet
from headway.cluster.local.kubelet.processes import kill_marked_processes
from headway.cluster.local.kubelet.resource_usage import UsageMeter
from headway.cluster.local.mesh.plane import DataPlanes
from headway.cluster.local.mesh.virtual_services import Mesh
from headway.cluster.local.services.ingresses import IngressListeners
from headway.cluster.local.services.names import ServiceNameProxies
from headway.cluster.local.services.proxies import ServiceProxies
from headway.cluster.local.workloads import (
    autoscalers,
    cronjobs,
    daemonsets,
    deployments,
    disruption_budgets,
    jobs,
    replicasets,
    statefulsets,
    volume_claims,
)
from headway.model.obj import Obj
from headway.state_dir import RUNTIME_LOCK, RuntimePaths, read_runtime_info
from headway.state_lock import DirLock

__all__ = ["Runtime", "RuntimePaths", "default_config_path", "read_runtime_info"]

_log = logging.getLogger("headway.runtime")

REVISION_POLL_SECONDS = 0.1  # how often the store's revision counter is read
SAFETY_RESYNC_SECONDS = 10.0  # a step at least this often, even with nothing announced
FAILED_STEP_RETRY_SECONDS = 1.0  # a step that raised is tried again this soon
_SHORTEST_REQUEUE_SECONDS = 0.05  # a controller asking for 0 s must not spin the loop


def next_step_in(requeue: float | None, *, failed: bool, resync: float) -> float:
    """Purely computational: seconds from the end of a step until the next one is due
    with nothing announced, from the earliest requeue the step's parts asked for."""
    wait = FAILED_STEP_RETRY_SECONDS if failed else resync
    if requeue is not None:
        wait = min(wait, requeue)
    return max(_SHORTEST_REQUEUE_SECONDS, wait)


def default_config_path(state_dir: Path) -> Path:
    """`<state-dir>/headway-runtime.yaml` when it exists, else `./headway-runtime.yaml`."""
    inside = state_dir / CONFIG_FILE_NAME
    return inside if inside.is_file() else Path.cwd() / CONFIG_FILE_NAME


class _ConfigSource:
    """The runtime config, re-read when the file changes; a broken edit keeps the last good one."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._stamp: float | None = None
        self._config = load_runtime_config(path)
        self._stamp = self._mtime()
        self.error = ""

    def _mtime(self) -> float | None:
        try:
            return self._path.stat().st_mtime
        except OSError:
            return None

    def __call__(self) -> RuntimeConfig:
        stamp = self._mtime()
        if stamp != self._stamp:
            self._stamp = stamp
            try:
                self._config, self.error = load_runtime_config(self._path), ""
            except RuntimeConfigError as err:
                self.error = str(err)
        return self._config


class Runtime:
    def __init__(
        self,
        *,
        state_dir: Path,
        clock: Clock,
        config_path: Path | None = None,
        resync_seconds: float = SAFETY_RESYNC_SECONDS,
        shutdown_grace_seconds: float = 10.0,
        data_planes: DataPlanes | None = None,
        api_port: int | None = None,
    ) -> None:
        self.paths = RuntimePaths(state_dir)
        self._api_port = api_port
        self.api: ApiServer | None = None
        self._clock = clock
        self._config = _ConfigSource(config_path or default_config_path(state_dir))
        self._resync = resync_seconds
        self._shutdown_grace = shutdown_grace_seconds
        self._wake = asyncio.Event()
        self.steps = 0  # steps run so far (tests count work with it)
        self.loop_turns = 0  # times the loop looked whether a step is due
        self.runtime_id = uuid.uuid4().hex
        state_dir.mkdir(parents=True, exist_ok=True)
        self.cluster = LocalCluster(self.paths.db, clock)
        self.service_names = ServiceNameProxies(self.cluster)
        self.kubelet = Kubelet(
            cluster=self.cluster,
            clock=clock,
            logs_dir=self.paths.logs_dir,
            config=self._config,
            runtime_id=self.runtime_id,
            wake=self.wake,
            events=self._record,
            proxy_env=self.service_names.env_for,
        )
        self.usage = UsageMeter(self.kubelet.container_process_groups)
        self.autoscalers = autoscalers.Autoscalers(usage=self._pod_usage)
        self.ingresses = IngressListeners(self.cluster)
        self.proxies = ServiceProxies(
            self.cluster,
            on_error=lambda svc, message: self._record(svc, "Warning", "ReconcileError", message),
        )
        self.mesh = (
            None
            if data_planes is None
            else Mesh(
                self.cluster,
                clock=clock,
                planes=data_planes,
                work_dir=state_dir / "mesh",
                router=lambda: self._config().router,
            )
        )

    def _pod_usage(self, pod: Obj) -> tuple[float | None, float | None]:
        found = self.usage.pod(str(pod["metadata"].get("uid", "")))
        return found.cpu_cores, found.memory_bytes

    def _container_usage(self, pod: Obj) -> dict[str, tuple[float | None, float | None]]:
        found = self.usage.containers(str(pod["metadata"].get("uid", "")))
        return {name: (u.cpu_cores, u.memory_bytes) for name, u in found.items()}

    def wake(self) -> None:
        self._wake.set()

    def _record(self, involved: Obj, kind: str, reason: str, message: str) -> None:
        with contextlib.suppress(ClusterError):
            record_event(
                self.cluster,
                self._clock,
                involved=involved,
                reason=reason,
                message=message,
                event_type="Warning" if kind == "Warning" else "Normal",
                component="headway-kubelet",
            )

    def _claim_state_dir(self) -> None:
        previous = read_runtime_info(self.paths)
        old_id = previous.get("runtimeId")
        if isinstance(old_id, str) and old_id:
            kill_marked_processes(old_id)
        self.paths.info.write_text(
            json.dumps(
                {
                    "pid": os.getpid(),
                    "runtimeId": self.runtime_id,
                    "startedAt": self._clock.now().isoformat(),
                    "store": str(self.paths.db),
                    "metricsAddress": self.mesh.metrics_address if self.mesh else "",
                    "apiAddress": self.api.address if self.api else "",
                }
            )
        )
        self.paths.pidfile.write_text(f"{os.getpid()}\n")

    async def step(self) -> float | None:
        """One pass of every loop; returns the earliest requeue any controller asked for."""
        wakes = [
            deployments.sync_deployments(self.cluster, self._clock),
            replicasets.sync_replica_sets(self.cluster, self._clock),
            statefulsets.sync_stateful_sets(self.cluster, self._clock),
            daemonsets.sync_daemon_sets(self.cluster, self._clock),
            cronjobs.sync_cron_jobs(self.cluster, self._clock),
            jobs.sync_jobs(self.cluster, self._clock, backoff=self._config().backoff),
            volume_claims.sync_volume_claims(
                self.cluster, self._clock, volumes_root=self.paths.volumes_dir
            ),
            self.autoscalers.sync(self.cluster, self._clock),
            disruption_budgets.sync_disruption_budgets(self.cluster, self._clock),
        ]
        await self.proxies.sync()
        wakes.append(await self.kubelet.sync())
        await self.proxies.sync()
        await self.ingresses.sync()
        if self.mesh is not None:
            await self.mesh.sync()
        due = [w for w in wakes if w is not None]
        return min(due) if due else None

    async def _guarded_step(self, last_failure: str) -> tuple[str, float]:
        """`step()`, surviving a failure: an object no check foresaw must not take every Pod
        down with the daemon. Each new failure is logged once, with its traceback. Returns
        the failure ("" for none) and the seconds until the next step is due."""
        self.steps += 1
        try:
            requeue = await self.step()
        except Exception as err:
            failure = f"{type(err).__name__}: {err}"
            if failure != last_failure:
                _log.exception("runtime step failed (the runtime goes on): %s", failure)
            return failure, next_step_in(None, failed=True, resync=self._resync)
        return "", next_step_in(requeue, failed=False, resync=self._resync)

    async def run(self, stop: asyncio.Event, *, ready: Callable[[], None] | None = None) -> None:
        """Run until `stop` is set, then shut everything down. Raises `LockHeld` (touching
        nothing) when another runtime holds this state directory."""
        lock = DirLock(self.paths.state_dir, RUNTIME_LOCK, now=self._clock.now())
        lock.acquire()  # before claiming: claiming kills the processes of the runtime before
        try:
            await self._run_holding_the_lock(stop, ready)
        finally:
            lock.release()

    async def _run_holding_the_lock(
        self, stop: asyncio.Event, ready: Callable[[], None] | None
    ) -> None:
        if self.mesh is not None:
            await self.mesh.start()  # first, so runtime.json can record its metrics address
        if self._api_port is not None:  # also before runtime.json, for its address
            self.api = ApiServer(db_path=self.paths.db, clock=self._clock, port=self._api_port,
                                 logs_dir=self.paths.logs_dir, usage=self._container_usage)
            self.api.start()
        self._claim_state_dir()
        register_node(self.cluster, self._clock)
        try:
            if ready is not None:
                ready()
            await self._loop(stop)
        finally:
            await self.shutdown()

    async def _loop(self, stop: asyncio.Event) -> None:
        """Step when woken, when the store moved, or when the step asked to be run again;
        otherwise sleep (module docstring)."""
        last_revision, last_failure, due = "", "", self._clock.monotonic()
        while not stop.is_set():
            self.loop_turns += 1
            revision = self.cluster.revision()
            if self._wake.is_set() or revision != last_revision or self._clock.monotonic() >= due:
                self._wake.clear()
                last_failure, wait = await self._guarded_step(last_failure)
                # The revision from before the step: what the step wrote itself (a Pod's
                # readiness, say) is news to the parts that ran before it, so a step that
                # wrote is followed by another, and the loop rests once a step writes nothing.
                last_revision = revision
                due = self._clock.monotonic() + wait
            left = due - self._clock.monotonic()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    self._wake.wait(), timeout=max(0.0, min(REVISION_POLL_SECONDS, left))
                )

    async def shutdown(self) -> None:
        if self.api is not None:
            await asyncio.to_thread(self.api.stop)
        if self.mesh is not None:
            await self.mesh.close()
        await self.ingresses.close()
        await self.proxies.close()
        await self.kubelet.shutdown(grace_cap=self._shutdown_grace)
        await self.service_names.close()
        kill_marked_processes(self.runtime_id, grace_seconds=1.0)
        with contextlib.suppress(OSError):
            self.paths.pidfile.unlink()
        self.cluster.close()
