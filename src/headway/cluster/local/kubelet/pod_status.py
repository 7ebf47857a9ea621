"""A local Pod's status from its containers' records, shaped as the kubelet writes it.

phase: `Pending` while init containers run (or no container has started yet), `Failed`
when an init container failed for good, `Succeeded` when every main container terminated
for good with exit code 0, `Failed` when every one did and one failed, `Running` otherwise.
Conditions: PodScheduled (always True), Initialized (False, `ContainersNotInitialized`,
until every init container completed, a sidecar counting once started), ContainersReady and
Ready (True when every main container and sidecar runs and passes readiness).
`lastTransitionTime` moves only when a condition's status changes.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from headway.cluster.local.kubelet.containers import ContainerRun
from headway.cluster.local.kubelet.network import LOOPBACK
from headway.kube.pod_facts import set_condition

if TYPE_CHECKING:
    from headway.cluster.local.kubelet.pods import PodRun

__all__ = ["pod_phase", "pod_status"]


def pod_phase(runs: list[ContainerRun]) -> str:
    if runs and all(c.done for c in runs):
        failed = any((c.terminated or {}).get("exitCode", 0) != 0 for c in runs)
        return "Failed" if failed else "Succeeded"
    if any(c.running or c.starts > 0 for c in runs):
        return "Running"
    return "Pending"


def _readiness_conditions(
    old: list[Mapping[str, Any]], run: PodRun, phase: str, now: datetime
) -> list[dict[str, Any]]:
    runs = [*run.sidecars, *run.containers.values()]
    unready = [c.name for c in runs if not c.ready]
    if phase in ("Succeeded", "Failed"):
        status, reason, message = "False", "PodCompleted", ""
    elif unready:
        status, reason = "False", "ContainersNotReady"
        message = f"containers with unready status: [{' '.join(unready)}]"
    else:
        status, reason, message = "True", "", ""
    conds: list[dict[str, Any]] = [dict(c) for c in old]
    conds = set_condition(conds, kind="PodScheduled", status="True", reason="", message="",
                          now=now)
    incomplete = _incomplete_init(run)
    if incomplete and not run.initialized:
        conds = set_condition(conds, kind="Initialized", status="False",
                              reason="ContainersNotInitialized",
                              message=f"containers with incomplete status: [{incomplete}]",
                              now=now)
    else:
        conds = set_condition(conds, kind="Initialized", status="True", reason="", message="",
                              now=now)
    for kind in ("ContainersReady", "Ready"):
        conds = set_condition(
            conds, kind=kind, status=status, reason=reason, message=message, now=now
        )
    order = {"PodScheduled": 0, "Initialized": 1, "ContainersReady": 2, "Ready": 3}
    cleaned = [{k: v for k, v in c.items() if v != ""} for c in conds]
    return sorted(cleaned, key=lambda c: order.get(str(c.get("type")), 9))


def _incomplete_init(run: PodRun) -> str:
    return " ".join(
        c.name for c in run.init_containers.values()
        if not (c.running and not c.startup_pending if c.sidecar
                else c.done and (c.terminated or {}).get("exitCode") == 0)
    )


def _statuses(runs: list[ContainerRun], *, initializing: bool) -> list[dict[str, Any]]:
    """`containerStatuses` entries; a container that has not run while the Pod initializes
    waits with reason `PodInitializing`, as the kubelet reports it."""
    out = []
    for crun in runs:
        status = crun.status()
        if initializing and crun.starts == 0 and "waiting" in status["state"]:
            status["state"] = {"waiting": {"reason": "PodInitializing"}}
        out.append(status)
    return out


def pod_status(*, pod: Mapping[str, Any], run: PodRun, now: datetime) -> dict[str, Any]:
    """The whole `status` of the pod: `Pending` while it initializes, `Failed` when an init
    container failed for good; sidecars count for readiness, not for the phase."""
    spec = pod.get("spec") or {}
    names = [str(c.get("name")) for c in spec.get("containers") or []]
    runs = [run.containers[n] for n in names if n in run.containers]
    initialized = run.initialized or not run.init_containers
    phase = "Failed" if run.init_failed else pod_phase(runs) if initialized else "Pending"
    old = (pod.get("status") or {}).get("conditions") or []
    status: dict[str, Any] = {
        "phase": phase,
        "conditions": _readiness_conditions(old, run, phase, now),
        "hostIP": LOOPBACK,
        "podIP": LOOPBACK,
        "podIPs": [{"ip": LOOPBACK}],
        "startTime": run.started_at,
    }
    if run.init_containers:
        inits = list(run.init_containers.values())
        status["initContainerStatuses"] = _statuses(inits, initializing=not initialized)
    status["containerStatuses"] = _statuses(runs, initializing=not initialized)
    return status
