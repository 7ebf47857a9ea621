"""The local kubelet: every Pod in the store runs as real processes, one per container.

Each sync compares the Pods in the store with the processes it runs:

* a new Pod gets a local port (annotation `headway.dev/port`, kept for the Pod's life),
  `status.podIP: 127.0.0.1`, and its containers started (image -> command by the runtime
  config; env with `PORT`, `HOSTNAME`, ConfigMap/Secret/field references);
* a Pod's volumes are files in its sandbox, kept up to date while it runs
  (`volume_files.py`), and removed with it;
* an exited container is restarted by `restartPolicy` with the kubelet's back-off
  (`CrashLoopBackOff` while it waits); a failed liveness probe kills and restarts it;
* a Pod that is gone from the store, or being deleted, is stopped: SIGTERM to each
  container's process group, SIGKILL after `terminationGracePeriodSeconds`;
* the status (phase, conditions, containerStatuses) is written when it changed.

A pass skips a Pod it left unchanged (same resourceVersion, no volumes, nothing started or
stopped by that visit) unless a container exited, a probe flipped, a stop finished or a
back-off fell due since: an idle runtime with 100 Pods then costs no per-Pod work.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from headway.clock import Clock, SystemClock
from headway.cluster.errors import NotFound
from headway.cluster.local.kubelet import containers as ctr
from headway.cluster.local.kubelet import pod_ports
from headway.cluster.local.kubelet.images import RuntimeConfig
from headway.cluster.local.kubelet.init_sequence import container_policy, init_progress, is_sidecar
from headway.cluster.local.kubelet.network import free_port
from headway.cluster.local.kubelet.pod_launch import ContainerLauncher
from headway.cluster.local.kubelet.pod_status import pod_status
from headway.cluster.protocol import Cluster
from headway.kubetime import format_time
from headway.model.obj import Obj

__all__ = ["PORT_ANNOTATION", "Kubelet", "PodRun"]

PORT_ANNOTATION = "headway.dev/port"
_log = logging.getLogger("headway.runtime")
FIELD_MANAGER = "headway-kubelet"
FINALIZER = "headway.dev/process"  # held while the Pod's processes run
EXIT_POLL_SECONDS = 0.5  # how often exits are looked for where they cannot be watched
FAILED_SYNC_RETRY_SECONDS = 1.0  # a Pod whose step raised is tried again this soon
# Shutdown without a grace cap: how long (real time) a deleted Pod's stop under way may go on.
_UNDER_WAY_SECONDS = 30.0

EventSink = Callable[[Obj, str, str, str], None]
"""(involved object, type Normal|Warning, reason, message)."""


@dataclass
class PodRun:
    uid: str
    namespace: str
    name: str
    port: int
    started_at: str
    ports: dict[str, int] = field(default_factory=dict)  # declared containerPort -> local
    grace_seconds: float = 30.0  # spec.terminationGracePeriodSeconds
    containers: dict[str, ctr.ContainerRun] = field(default_factory=dict)
    init_containers: dict[str, ctr.ContainerRun] = field(default_factory=dict)  # in order
    initialized: bool = False  # every init container completed once (it stays so)
    init_failed: bool = False
    sidecar_stop: asyncio.Task[None] | None = None  # stopping the sidecars once mains are done

    @property
    def sidecars(self) -> list[ctr.ContainerRun]:
        return [c for c in self.init_containers.values() if c.sidecar]


class Kubelet:
    """Runs the store's Pods as processes; `sync()` is one step, `shutdown()` stops all."""

    def __init__(
        self,
        *,
        cluster: Cluster,
        clock: Clock,
        logs_dir: Path,
        config: Callable[[], RuntimeConfig],
        runtime_id: str,
        wake: Callable[[], None] = lambda: None,
        events: EventSink = lambda obj, kind, reason, message: None,
        proxy_env: Callable[[str], Mapping[str, str]] | None = None,
    ) -> None:
        self._cluster = cluster
        self._clock = clock
        self._events = events
        self._wake = wake
        self._runs: dict[str, PodRun] = {}
        self._stopping: set[asyncio.Task[None]] = set()
        self._releasing: set[str] = set()
        # uid -> the resourceVersion a visit left the Pod at with nothing pending for it: a
        # pass skips such a Pod until it changes or something happens to its processes.
        self._settled: dict[str, str] = {}
        self._events_pending = True  # an exit, probe flip or stop since the last pass
        self._due_mono: float | None = None  # when a back-off or retry ends
        self.pod_visits = 0  # Pods a pass looked at (tests count work with it)
        self._follow_up = False  # a visit moved a container on: the next step looks again
        self._launcher = ContainerLauncher(
            cluster=cluster,
            clock=clock,
            logs_dir=logs_dir,
            config=config,
            runtime_id=runtime_id,
            events=events,
            on_probe=self._probe_changed,
            proxy_env=proxy_env,
        )

    @property
    def runs(self) -> Mapping[str, PodRun]:
        return self._runs

    def _probe_changed(self) -> None:
        """A container exited, a probe flipped or a stop finished: the next pass visits every
        Pod (which one is not tracked; a visit to an unchanged Pod is cheap)."""
        self._events_pending = True
        self._wake()

    async def sync(self) -> float | None:
        """One pass over every Pod in the store; returns the seconds until a container's
        restart back-off or image retry ends (None: nothing timed is pending). Exits and
        probe changes call `wake` instead, so an idle kubelet needs no periodic look."""
        pods = self._cluster.list("v1", "Pod")
        seen: set[str] = set()
        every = self._events_pending or (
            self._due_mono is not None and self._clock.monotonic() >= self._due_mono
        )
        self._events_pending, failed = False, False
        for pod in pods:
            uid = str(pod["metadata"].get("uid", ""))
            seen.add(uid)
            if pod["metadata"].get("deletionTimestamp"):
                self._on_deleting(uid, pod)
                continue
            if not every and self._is_settled(uid, pod):
                continue
            failed = not await self._visit(uid, pod) or failed
        for uid in list(self._runs):
            if uid not in seen:
                self._begin_stop(uid, finalize=None)
        self._settled = {uid: rv for uid, rv in self._settled.items() if uid in seen}
        due = self._next_due(retry_failed=failed)
        self._due_mono = None if due is None else self._clock.monotonic() + due
        if self._follow_up:  # a visit started or stopped something: look at that Pod again
            self._follow_up = False
            self._wake()
        return due

    async def _visit(self, uid: str, pod: Obj) -> bool:
        """`_sync_pod`, surviving a failure (logged, a FailedSync Event); False if it failed."""
        self.pod_visits += 1
        self._settled.pop(uid, None)
        try:
            self._settled[uid] = await self._sync_pod(pod)
        except NotFound:
            return True  # deleted while we worked on it
        except Exception as err:
            message = f"{type(err).__name__}: {err}"
            meta = pod["metadata"]
            _log.warning("pod %s/%s: %s", meta.get("namespace"), meta["name"], message)
            self._events(pod, "Warning", "FailedSync", message)
            return False
        return True

    def _is_settled(self, uid: str, pod: Obj) -> bool:
        """Unchanged since a visit left it, and no volume whose sources (ConfigMaps, Secrets,
        other objects) may have changed without the Pod."""
        if (pod.get("spec") or {}).get("volumes"):
            return False
        return self._settled.get(uid) == str(pod["metadata"].get("resourceVersion", ""))

    def _next_due(self, *, retry_failed: bool) -> float | None:
        dues = [FAILED_SYNC_RETRY_SECONDS] if retry_failed else []
        dues += [
            due
            for run in self._runs.values()
            for crun in (*run.init_containers.values(), *run.containers.values())
            if (due := self._launcher.next_due(crun)) is not None
        ]
        if self._launcher.polls_exits and self._runs:
            dues.append(EXIT_POLL_SECONDS)
        return min(dues) if dues else None

    async def _sync_pod(self, pod: Obj) -> str:
        """One Pod's step; returns the resourceVersion the Pod is left at ("" when this
        visit changed its metadata, so the next pass looks again)."""
        uid = str(pod["metadata"]["uid"])
        run = self._runs.get(uid)
        admitted_before = run is not None
        if run is None:
            if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                # finished before this runtime started: nothing to run
                return str(pod["metadata"].get("resourceVersion", ""))
            run = self._admit(pod)
            self._runs[uid] = run
        marks = _progress_marks(run)
        spec = pod.get("spec") or {}
        policy = str(spec.get("restartPolicy") or "Always")
        await self._step_init_containers(pod, run, policy)
        mains = spec.get("containers") or []
        if run.initialized and not self._main_finished(run):
            for container in mains:
                await self._step(pod, run, container, run.containers[str(container.get("name"))],
                                 policy)
        retired = not self._main_finished(run) or self._sidecars_stopped(run)
        if (pod.get("spec") or {}).get("volumes"):
            self._launcher.refresh_volumes(pod)
        status = pod_status(pod=pod, run=run, now=self._clock.now())
        final = status["phase"] in ("Succeeded", "Failed")
        if final and not retired and not run.init_failed:
            # Main containers done: Running until its sidecars have stopped. A failed init
            # container fails the Pod at once, as the kubelet's phase does (else Init:Error
            # would read Running while the sidecars stop).
            status["phase"] = "Running"
        moved = _progress_marks(run) != marks  # a start may let the next container go
        settled = admitted_before and not moved
        self._follow_up = self._follow_up or moved
        left_at = str(pod["metadata"].get("resourceVersion", "")) if settled else ""
        if status != (pod.get("status") or {}):
            written = self._cluster.patch_status("v1", "Pod", run.name, run.namespace, status)
            left_at = str(written["metadata"].get("resourceVersion", "")) if left_at else ""
        if final and retired:
            # Nothing runs any more: forget the Pod and let it be deleted without us.
            del self._runs[uid]
            self._claim(pod, run.port, hold=False, ports=run.ports)
            return ""
        return left_at

    async def _step(
        self, pod: Obj, run: PodRun, container: dict[str, object], crun: ctr.ContainerRun,
        policy: str,
    ) -> None:
        await self._launcher.step(pod=pod, run_port=run.port, container=container, crun=crun,
                                  policy=policy, declared=run.ports)

    async def _step_init_containers(self, pod: Obj, run: PodRun, policy: str) -> None:
        """Init containers in order, sidecars kept running (`init_sequence`); the main
        containers wait (`PodInitializing`) until every init container has completed."""
        specs = (pod.get("spec") or {}).get("initContainers") or []
        if run.initialized:
            names = tuple(c.name for c in run.sidecars)
        else:
            progress = init_progress(specs, run.init_containers)
            run.initialized, run.init_failed = progress.initialized, progress.failed
            names = progress.step
        if self._main_finished(run):
            return
        for container in specs:
            name = str(container.get("name"))
            if name in names:
                await self._step(pod, run, container, run.init_containers[name],
                                 container_policy(policy, container, init=True))
        if not run.initialized:  # what this step's exits and starts changed
            after = init_progress(specs, run.init_containers)
            run.initialized, run.init_failed = after.initialized, after.failed

    def _main_finished(self, run: PodRun) -> bool:
        """Nothing more will run: an init container failed for good, or every main container
        terminated for good (then the sidecars are stopped)."""
        return run.init_failed or (run.initialized and all(c.done for c in
                                                           run.containers.values()))

    def _sidecars_stopped(self, run: PodRun) -> bool:
        """Whether the sidecars of a Pod whose main containers are done have stopped; starts
        stopping them (in the background, last started first) the first time it is asked."""
        if run.sidecar_stop is None:
            if not any(c.handle is not None or c.stopping is not None for c in run.sidecars):
                return True  # nothing to stop: the Pod's phase need not wait a step
            run.sidecar_stop = asyncio.create_task(self._stop_sidecars(run))
            run.sidecar_stop.add_done_callback(lambda _: self._probe_changed())
        return run.sidecar_stop.done()

    async def _stop_sidecars(self, run: PodRun) -> None:
        for crun in reversed(run.sidecars):
            crun.done = True
            crun.cancel_probes()
            if crun.stopping is not None:
                await asyncio.gather(crun.stopping, return_exceptions=True)
            if crun.handle is None:
                continue
            await ctr.stop_process(crun.handle, grace_seconds=run.grace_seconds,
                                   clock=self._clock, pre_stop=crun.pre_stop)
            code = crun.handle.poll()
            crun.terminated = ctr.terminated_state(
                exit_code=0 if code is None else code, started=crun.started_at,
                finished=self._clock.now())
            crun.handle = None

    def _admit(self, pod: Obj) -> PodRun:
        meta = pod["metadata"]
        annotations = meta.get("annotations") or {}
        raw_port = str(annotations.get(PORT_ANNOTATION, ""))
        port = int(raw_port) if raw_port.isdigit() else free_port()
        ports = pod_ports.assign_ports(pod, port, free_port)
        self._claim(pod, port, hold=True, ports=ports)
        status = pod.get("status") or {}
        previous = {s.get("name"): s for s in status.get("containerStatuses") or []}
        run = PodRun(
            uid=str(meta["uid"]),
            namespace=str(meta.get("namespace") or "default"),
            name=str(meta["name"]),
            port=port,
            ports=ports,
            started_at=str(status.get("startTime") or format_time(self._clock.now())),
            grace_seconds=_grace(pod),
        )
        for container in (pod.get("spec") or {}).get("containers") or []:
            name = str(container.get("name"))
            run.containers[name] = _resumed(container, previous.get(name) or {})
        init_previous = {s.get("name"): s for s in status.get("initContainerStatuses") or []}
        for container in (pod.get("spec") or {}).get("initContainers") or []:
            name = str(container.get("name"))
            run.init_containers[name] = _resumed(container, init_previous.get(name) or {},
                                                 init=True)
        return run

    def _claim(
        self, pod: Obj, port: int, *, hold: bool, ports: Mapping[str, int] | None = None
    ) -> None:
        """Apply the kubelet's fields: the port annotations, and the finalizer while `hold`
        (`ports` None keeps the declared ports the Pod recorded)."""
        meta = pod["metadata"]
        declared = pod_ports.recorded_ports(pod) if ports is None else dict(ports)
        annotations = {PORT_ANNOTATION: str(port)}
        if declared:
            annotations[pod_ports.PORTS_ANNOTATION] = json.dumps(declared, sort_keys=True)
        body_meta: dict[str, object] = {
            "name": meta["name"],
            "namespace": meta.get("namespace") or "default",
            "annotations": annotations,
        }
        if hold:
            body_meta["finalizers"] = [FINALIZER]
        self._cluster.apply(
            {"apiVersion": "v1", "kind": "Pod", "metadata": body_meta},
            field_manager=FIELD_MANAGER,
            force=True,
        )

    def _on_deleting(self, uid: str, pod: Obj) -> None:
        if uid in self._runs:
            self._begin_stop(uid, finalize=pod)
        elif uid not in self._releasing and FINALIZER in (pod["metadata"].get("finalizers") or []):
            raw = str((pod["metadata"].get("annotations") or {}).get(PORT_ANNOTATION, "0"))
            with contextlib.suppress(NotFound):  # nothing runs for it here: release at once
                self._claim(pod, int(raw) if raw.isdigit() else 0, hold=False)

    def _begin_stop(self, uid: str, *, finalize: Obj | None) -> None:
        run = self._runs.pop(uid, None)
        if run is None:
            return
        task = asyncio.create_task(
            self._stop_run(run, run.grace_seconds, release=finalize, forget=True))
        self._stopping.add(task)
        self._releasing.add(uid)
        task.add_done_callback(self._stopping.discard)
        task.add_done_callback(lambda _: self._releasing.discard(uid))

    async def _stop_run(
        self,
        run: PodRun,
        grace: float,
        release: Obj | None = None,
        *,
        forget: bool = False,
        clock: Clock | None = None,
    ) -> None:
        """Stop the Pod's processes, waiting on `clock` (the kubelet's unless given); `forget`
        (the Pod is deleted or gone) also removes its sandbox, which a runtime shutting down
        keeps for the next start."""
        clock = clock or self._clock
        start = clock.monotonic()
        await self._stop_containers(list(run.containers.values()), grace, clock)
        for sidecar in reversed(run.sidecars):  # after the main containers, last first
            left = max(0.0, grace - (clock.monotonic() - start))
            await self._stop_containers([sidecar], left, clock)
        inits = [c for c in run.init_containers.values() if not c.sidecar]
        await self._stop_containers(inits, grace, clock)
        if forget:
            identity = {"name": run.name, "namespace": run.namespace, "uid": run.uid}
            self._launcher.remove_sandbox({"metadata": identity})
        if release is not None:  # processes gone: let the store finish deleting the Pod
            with contextlib.suppress(NotFound):
                self._claim(release, run.port, hold=False, ports=run.ports)

    async def _stop_containers(
        self, runs: list[ctr.ContainerRun], grace: float, clock: Clock
    ) -> None:
        stops = []
        for crun in runs:
            crun.cancel_probes()
            pre_stop = crun.pre_stop
            if crun.stopping is not None:
                if clock is self._clock:
                    stops.append(crun.stopping)  # a restart's stop already under way
                    continue
                crun.stopping.cancel()  # it waits on the kubelet's clock: stop again on `clock`
                pre_stop = None  # the hook already ran (or is cut off) in that stop
            if crun.handle is not None:
                stop = ctr.stop_process(
                    crun.handle, grace_seconds=grace, clock=clock, pre_stop=pre_stop
                )
                stops.append(asyncio.ensure_future(stop))
        await asyncio.gather(*stops, return_exceptions=True)

    async def shutdown(self, *, grace_cap: float | None = None) -> None:
        """Stop every container this kubelet runs and wait until their groups are gone.

        Shutdown waits on real time, never on the kubelet's clock: a virtual clock that
        nobody moves any more (a test's, at its end) must not hold it up. Stops of deleted
        Pods already under way on the kubelet's clock get `grace_cap` more real seconds; what
        is still running then is left to the runtime's `kill_marked_processes`."""
        real = SystemClock()
        under_way = set(self._stopping)
        stops = []
        for uid in list(self._runs):
            run = self._runs.pop(uid)
            if run.sidecar_stop is not None:
                run.sidecar_stop.cancel()  # on the kubelet's clock; stopped again below
            grace = run.grace_seconds if grace_cap is None else min(run.grace_seconds, grace_cap)
            stops.append(asyncio.create_task(self._stop_run(run, grace, clock=real)))
        await asyncio.gather(*stops, return_exceptions=True)
        if under_way:
            wait = _UNDER_WAY_SECONDS if grace_cap is None else grace_cap
            _, late = await asyncio.wait(under_way, timeout=wait)
            for task in late:
                task.cancel()
            await asyncio.gather(*late, return_exceptions=True)

    def container_process_groups(self, uid: str) -> dict[str, int]:
        """The process group of each running container of the Pod (sidecars included). Read
        from the API's thread too, so it copies before it iterates."""
        run = self._runs.get(uid)
        if run is None:
            return {}
        containers = [*list(run.init_containers.values()), *list(run.containers.values())]
        return {c.name: c.handle.pid for c in containers if c.handle is not None}

    def live_process_groups(self) -> list[int]:
        return [
            c.handle.pid
            for r in self._runs.values()
            for c in [*r.containers.values(), *r.init_containers.values()]
            if c.handle
        ]


def _resumed(
    container: Mapping[str, object], before: Mapping[str, object], *, init: bool = False
) -> ctr.ContainerRun:
    """A container's record as a new runtime takes the Pod over: its restarts counted on,
    and a plain init container that had completed stays completed (not run again)."""
    crun = ctr.ContainerRun(name=str(container.get("name")),
                            image=str(container.get("image") or ""),
                            sidecar=init and is_sidecar(container))
    state = before.get("state") if isinstance(before.get("state"), dict) else {}
    assert isinstance(state, dict)
    restarts = before.get("restartCount")
    crun.restart_count = restarts if isinstance(restarts, int) else 0
    crun.starts = 1 if state.get("running") or crun.restart_count else 0
    finished = state.get("terminated")
    if init and not crun.sidecar and isinstance(finished, dict) and finished.get("exitCode") == 0:
        crun.done, crun.terminated, crun.waiting = True, dict(finished), None
    return crun


def _progress_marks(run: PodRun) -> tuple[object, ...]:
    """What a visit may move on: each container's starts, run and done state, and the init
    sequence. A visit that moved any of it is followed by another (the next init container
    starts once the one before runs), since it may have written nothing the loop would see."""
    containers = (*run.init_containers.values(), *run.containers.values())
    return (run.initialized, run.init_failed,
            *((c.starts, c.handle is None, c.done) for c in containers))


def _grace(pod: Obj) -> float:
    raw = (pod.get("spec") or {}).get("terminationGracePeriodSeconds", 30)
    return float(raw) if isinstance(raw, int | float) and raw >= 0 else 30.0
