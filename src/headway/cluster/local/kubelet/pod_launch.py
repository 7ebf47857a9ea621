"""One kubelet step for one container: notice exits, kill on liveness, back off, start.

Image problems leave the container waiting in `ErrImagePull`, then `ImagePullBackOff`
while it retries on the restart back-off schedule; a missing ConfigMap or Secret leaves it
in `CreateContainerConfigError`; an executable that cannot start terminates it with exit
code 128 (`StartError`) and is then treated like any other exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from headway.clock import Clock
from headway.cluster.errors import ClusterError
from headway.cluster.local.kubelet import containers as ctr
from headway.cluster.local.kubelet import probes, restart_backoff
from headway.cluster.local.kubelet.exit_watch import watch_exit
from headway.cluster.local.kubelet.images import (
    ImageNotMapped,
    LaunchSpec,
    RuntimeConfig,
    RuntimeConfigError,
    resolve_launch,
)
from headway.cluster.local.kubelet.lifecycle import pre_stop_hook
from headway.cluster.local.kubelet.network import free_port
from headway.cluster.local.kubelet.pod_ports import container_declared, container_ports, port_env
from headway.cluster.local.kubelet.podenv import (
    EnvConfigError,
    expand_references,
    resolve_container_env,
)
from headway.cluster.local.kubelet.processes import RUNTIME_ID_ENV, start_process
from headway.cluster.local.kubelet.service_env import service_links
from headway.cluster.local.kubelet.volume_files import PodSandboxes
from headway.cluster.local.kubelet.volumes import rewrite_mount_paths
from headway.cluster.protocol import Cluster
from headway.model.obj import Obj
from headway.state_dir import container_log_path

__all__ = ["ContainerLauncher"]

MountPlaces = list[tuple[str, str]]  # (mount path, host path), longest mount path first
_INHERITED = ("PATH", "LANG", "LC_ALL", "HOME", "TZ", "VIRTUAL_ENV", "PYTHONPATH")


class ContainerLauncher:
    def __init__(
        self,
        *,
        cluster: Cluster,
        clock: Clock,
        logs_dir: Path,
        config: Callable[[], RuntimeConfig],
        runtime_id: str,
        events: Callable[[Obj, str, str, str], None],
        on_probe: Callable[[], None],
        sandboxes: PodSandboxes | None = None,
        proxy_env: Callable[[str], Mapping[str, str]] | None = None,
    ) -> None:
        self._cluster = cluster
        self._proxy_env = proxy_env
        self._sandboxes = sandboxes or PodSandboxes(logs_dir.parent / "pods")
        self._clock = clock
        self._logs_dir = logs_dir
        self._config = config
        self._runtime_id = runtime_id
        self._events = events
        self._on_probe = on_probe
        self.polls_exits = False  # a process whose exit cannot be watched was started

    async def step(
        self,
        *,
        pod: Obj,
        run_port: int,
        container: dict[str, Any],
        crun: ctr.ContainerRun,
        policy: str,
        declared: Mapping[str, int] | None = None,
    ) -> None:
        """One step of one container; `declared` maps the Pod's declared ports to local ones
        (`pod_ports`), for the first container's env and placeholders."""
        if crun.stopping is not None:
            if not crun.stopping.done():
                return
            crun.stopping = None
        if crun.handle is not None:
            code = crun.handle.poll()
            if code is None:
                self._check_liveness(pod, crun)
                return
            self._finish(pod, crun, code, policy)
        if crun.done or not self._may_start(pod, crun):
            return
        await self._start(
            pod=pod,
            run_port=run_port,
            container=container,
            crun=crun,
            policy=policy,
            declared=declared or {},
        )

    def _check_liveness(self, pod: Obj, crun: ctr.ContainerRun) -> None:
        if crun.liveness is None or crun.liveness.passing or crun.handle is None:
            return
        which = "startup" if crun.startup_pending else "liveness"
        message = f"Container {crun.name} failed {which} probe, will be restarted"
        self._events(
            pod,
            "Warning",
            "Unhealthy",
            f"{which.capitalize()} probe failed: {crun.liveness.message}",
        )
        self._events(pod, "Normal", "Killing", message)
        crun.kill_reason = message
        crun.cancel_probes()
        grace = float((pod.get("spec") or {}).get("terminationGracePeriodSeconds", 30) or 0)
        crun.stopping = asyncio.ensure_future(
            ctr.stop_process(
                crun.handle, grace_seconds=grace, clock=self._clock, pre_stop=crun.pre_stop
            )
        )
        crun.stopping.add_done_callback(lambda _: self._on_probe())

    def _finish(self, pod: Obj, crun: ctr.ContainerRun, code: int, policy: str) -> None:
        crun.cancel_probes()
        if crun.handle is not None and crun.handle.group_alive():
            crun.handle.signal_group(9)  # the container's other processes go with it
        crun.previous_terminated = crun.terminated
        crun.terminated = ctr.terminated_state(
            exit_code=code,
            started=crun.started_at,
            finished=self._clock.now(),
            message=crun.kill_reason,
        )
        # A liveness kill restarts under Always and OnFailure whatever the exit code.
        killed = crun.kill_reason.startswith("Container ") and policy != "Never"
        crun.kill_reason = ""
        crun.handle = None
        crun.readiness = crun.liveness = None
        crun.startup_pending = False
        crun.finished_mono = self._clock.monotonic()
        crun.done = not (killed or ctr.should_restart(policy, code))
        if not crun.done:
            crun.waiting = ("ContainerCreating", "")

    def _may_start(self, pod: Obj, crun: ctr.ContainerRun) -> bool:
        now = self._clock.monotonic()
        if crun.image_retry_mono > now:
            return False
        if crun.finished_mono is None:
            return True
        backoff = self._config().backoff
        if restart_backoff.in_backoff(
            crun.backoff, finished_at=crun.finished_mono, now=now, max_seconds=backoff.max_seconds
        ):
            assert crun.backoff is not None
            crun.waiting = (
                "CrashLoopBackOff",
                ctr.crash_backoff_message(
                    crun.backoff.delay, crun.name, str(pod["metadata"]["name"])
                ),
            )
            return False
        crun.backoff = restart_backoff.next_entry(
            crun.backoff,
            finished_at=crun.finished_mono,
            initial=backoff.initial_seconds,
            max_seconds=backoff.max_seconds,
        )
        return True

    def next_due(self, crun: ctr.ContainerRun) -> float | None:
        """Seconds until this container's back-off or image retry ends (None: nothing
        timed is pending; its exit, a probe or the store wakes the kubelet instead)."""
        if crun.handle is not None or crun.done or crun.stopping is not None:
            return None
        now = self._clock.monotonic()
        if crun.image_retry_mono > now:
            return crun.image_retry_mono - now
        if crun.finished_mono is None or crun.backoff is None:
            return None
        left = restart_backoff.remaining(crun.backoff, finished_at=crun.finished_mono, now=now)
        return left if left > 0 else None

    def _retry_later(self, crun: ctr.ContainerRun, reason: str, message: str) -> None:
        backoff = self._config().backoff
        delay = min(
            backoff.initial_seconds * 2.0 ** max(0, crun.image_attempts - 1), backoff.max_seconds
        )
        crun.image_attempts += 1
        crun.image_retry_mono = self._clock.monotonic() + delay
        crun.waiting = (reason, message)

    def _prepare(
        self,
        *,
        pod: Obj,
        run_port: int,
        container: dict[str, Any],
        crun: ctr.ContainerRun,
        declared: Mapping[str, int],
    ) -> tuple[LaunchSpec, int, dict[str, str], Mapping[str, int], MountPlaces] | None:
        """The command, port, env, declared ports and mounts of the next run; None
        (container waiting) if not ready. Each container gets the local ports of the ports
        it declares; the first container's `PORT` is the Pod's port, a later one's its
        first declared port's (or a free one)."""
        first = crun.name == ((pod.get("spec") or {}).get("containers") or [{}])[0].get("name")
        declared = container_ports(container, declared)
        own = [declared[str(n)] for _, n in container_declared(container) if str(n) in declared]
        port = run_port if first else (own[0] if own else free_port())
        try:
            launch = resolve_launch(self._config(), container, port=port, declared_ports=declared)
        except (ImageNotMapped, RuntimeConfigError) as err:
            reason = "ErrImagePull" if crun.image_attempts == 0 else "ImagePullBackOff"
            self._retry_later(crun, reason, str(err))
            self._events(pod, "Warning", "Failed", f'Failed to pull image "{crun.image}": {err}')
            return None
        try:
            lookup = _lookup(self._cluster, str(pod["metadata"].get("namespace") or "default"))
            places = self._sandboxes.mount_places(pod, container, lookup)
            env = {**self._environment(pod, container, launch, port, places),
                   **port_env(declared)}
        except (EnvConfigError, OSError) as err:
            self._retry_later(crun, "CreateContainerConfigError", str(err))
            self._events(pod, "Warning", "Failed", f"Error: {err}")
            return None
        crun.image_attempts = 0
        return launch, port, env, declared, places

    async def _start(
        self,
        *,
        pod: Obj,
        run_port: int,
        container: dict[str, Any],
        crun: ctr.ContainerRun,
        policy: str,
        declared: Mapping[str, int],
    ) -> None:
        prepared = self._prepare(
            pod=pod, run_port=run_port, container=container, crun=crun, declared=declared
        )
        if prepared is None:
            return
        launch, port, env, declared, places = prepared
        meta = pod["metadata"]
        argv = [rewrite_mount_paths(expand_references(a, env), places) for a in launch.argv]
        namespace = str(meta.get("namespace") or "default")
        path = container_log_path(self._logs_dir, namespace, str(meta["name"]), crun.name)
        if crun.starts:
            ctr.rotate_log(str(path))
        restart = crun.starts > 0
        crun.starts += 1
        crun.restart_count += 1 if restart else 0
        crun.started_at = self._clock.now()
        try:
            handle = start_process(argv=argv, env=env, cwd=launch.working_dir, log_path=str(path))
        except OSError as err:
            self._start_failed(pod, crun, policy, f"{argv[0] if argv else '(no command)'}: {err}")
            return
        crun.handle, crun.waiting = handle, None
        if not watch_exit(handle.pid, self._on_probe):  # its exit wakes the runtime
            self.polls_exits = True
        target = probes.ProbeTarget(
            port=port,
            declared_ports=_declared_ports(container),
            env=env,
            cwd=launch.working_dir,
            local_ports=declared,
        )
        crun.pre_stop = pre_stop_hook(container, target, self._clock)
        self._start_probes(container, crun, target)
        self._events(pod, "Normal", "Started", f"Started container {crun.name} (pid {handle.pid})")

    def _start_failed(self, pod: Obj, crun: ctr.ContainerRun, policy: str, why: str) -> None:
        """An executable that cannot start ends the run with 128, as a runtime's StartError."""
        crun.kill_reason = f"failed to start {why}"
        self._events(pod, "Warning", "Failed", f"Error: {crun.kill_reason}")
        self._finish(pod, crun, 128, policy)
        if crun.terminated is not None:
            crun.terminated["reason"] = "StartError"

    def refresh_volumes(self, pod: Obj) -> None:
        """Bring a running Pod's volumes up to date (a ConfigMap or Secret changed); a source
        that went missing keeps the files it had, as the kubelet does."""
        lookup = _lookup(self._cluster, str(pod["metadata"].get("namespace") or "default"))
        with contextlib.suppress(EnvConfigError, OSError):
            self._sandboxes.write_volumes(pod, lookup)

    def remove_sandbox(self, pod: Mapping[str, Any]) -> None:
        self._sandboxes.remove(pod)

    def _environment(
        self,
        pod: Obj,
        container: dict[str, Any],
        launch: LaunchSpec,
        port: int,
        places: MountPlaces,
    ) -> dict[str, str]:
        meta = pod["metadata"]
        namespace = str(meta.get("namespace") or "default")
        env = {k: os.environ[k] for k in _INHERITED if k in os.environ}
        env.update(service_links(pod, self._cluster.list("v1", "Service", namespace=namespace)))
        if self._proxy_env is not None:  # Service names through the namespace's HTTP proxy
            env.update(self._proxy_env(namespace))
        env.update(dict(launch.env))
        env["HOSTNAME"] = str(meta["name"])
        declared_env = resolve_container_env(pod, container, _lookup(self._cluster, namespace))
        env.update({k: rewrite_mount_paths(v, places) for k, v in declared_env.items()})
        env["PORT"] = str(port)
        env[RUNTIME_ID_ENV] = self._runtime_id
        return env

    def _start_probes(
        self, container: dict[str, Any], crun: ctr.ContainerRun, target: probes.ProbeTarget
    ) -> None:
        readiness = probes.parse_probe(container.get("readinessProbe"))
        liveness = probes.parse_probe(container.get("livenessProbe"))
        startup = probes.parse_probe(container.get("startupProbe"))
        if startup is not None:
            crun.startup_pending = True
            crun.readiness = probes.ProbeState(passing=False) if readiness else None
            crun.probe_tasks.append(
                asyncio.create_task(self._startup_then(startup, target, crun, readiness, liveness))
            )
            return
        self._start_main_probes(crun, target, readiness, liveness)

    async def _startup_then(
        self,
        startup: probes.ProbeSpec,
        target: probes.ProbeTarget,
        crun: ctr.ContainerRun,
        readiness: probes.ProbeSpec | None,
        liveness: probes.ProbeSpec | None,
    ) -> None:
        """The startupProbe alone until it passes; then readiness and liveness take over.
        `failureThreshold` failures in a row fail it, and the container is restarted."""
        await self._clock.sleep(startup.initial_delay_seconds)
        state = probes.ProbeState(passing=False)
        while True:
            outcome = await probes.run_check(startup, target)
            state = probes.observe(startup, state, outcome.ok, outcome.message)
            if state.passing:
                crun.startup_pending = False
                self._start_main_probes(crun, target, readiness, liveness)
                self._on_probe()
                return
            if state.failures >= startup.failure_threshold:
                crun.liveness = probes.ProbeState(passing=False, message=outcome.message)
                self._on_probe()
                return
            await self._clock.sleep(startup.period_seconds)

    def _start_main_probes(
        self,
        crun: ctr.ContainerRun,
        target: probes.ProbeTarget,
        readiness: probes.ProbeSpec | None,
        liveness: probes.ProbeSpec | None,
    ) -> None:
        if readiness is not None:
            crun.readiness = probes.ProbeState(passing=False)
            crun.probe_tasks.append(self._probe_task(readiness, target, crun, "readiness"))
        if liveness is not None:
            crun.liveness = probes.ProbeState(passing=True)
            crun.probe_tasks.append(self._probe_task(liveness, target, crun, "liveness"))

    def _probe_task(
        self, spec: probes.ProbeSpec, target: probes.ProbeTarget, crun: ctr.ContainerRun, which: str
    ) -> asyncio.Task[None]:
        def record(state: probes.ProbeState) -> None:
            before = getattr(crun, which)
            setattr(crun, which, state)
            if before is None or before.passing != state.passing:
                self._on_probe()

        initial = probes.ProbeState(passing=which == "liveness")
        return asyncio.create_task(
            probes.run_probe_loop(
                spec=spec, target=target, clock=self._clock, on_result=record, initial=initial
            )
        )


def _declared_ports(container: dict[str, Any]) -> dict[str, int]:
    ports: dict[str, int] = {}
    for index, port in enumerate(container.get("ports") or []):
        if isinstance(port.get("containerPort"), int):
            ports[str(port.get("name") or f"#{index}")] = int(port["containerPort"])
    return ports


_CLUSTER_SCOPED = frozenset({"PersistentVolume"})


def _lookup(cluster: Cluster, namespace: str) -> Callable[[str, str], Obj | None]:
    def lookup(kind: str, name: str) -> Obj | None:
        try:
            return cluster.get("v1", kind, name, None if kind in _CLUSTER_SCOPED else namespace)
        except ClusterError:
            return None

    return lookup
