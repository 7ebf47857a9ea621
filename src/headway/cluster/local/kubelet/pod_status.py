"""A local Pod's status from its containers' records, shaped as the kubelet writes it.

phase: `Succeeded` when every container terminated for good with exit code 0, `Failed`
when every container terminated for good and one failed, `Pending` while no container has
started yet, `Running` otherwise. Conditions: PodScheduled and Initialized (always True
here), ContainersReady and Ready (True when every container runs and passes readiness).
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
    old: list[Mapping[str, Any]], runs: list[ContainerRun], phase: str, now: datetime
) -> list[dict[str, Any]]:
    unready = [c.name for c in runs if not c.ready]
    if phase in ("Succeeded", "Failed"):
        status, reason, message = "False", "PodCompleted", ""
    elif unready:
        status, reason = "False", "ContainersNotReady"
        message = f"containers with unready status: [{' '.join(unready)}]"
    else:
        status, reason, message = "True", "", ""
    conds: list[dict[str, Any]] = [dict(c) for c in old]
    for kind in ("PodScheduled", "Initialized"):
        conds = set_condition(conds, kind=kind, status="True", reason="", message="", now=now)
    for kind in ("ContainersReady", "Ready"):
        conds = set_condition(
            conds, kind=kind, status=status, reason=reason, message=message, now=now
        )
    order = {"PodScheduled": 0, "Initialized": 1, "ContainersReady": 2, "Ready": 3}
    cleaned = [{k: v for k, v in c.items() if v != ""} for c in conds]
    return sorted(cleaned, key=lambda c: order.get(str(c.get("type")), 9))


def pod_status(*, pod: Mapping[str, Any], run: PodRun, now: datetime) -> dict[str, Any]:
    """The whole `status` of the pod."""
    spec = pod.get("spec") or {}
    names = [str(c.get("name")) for c in spec.get("containers") or []]
    runs = [run.containers[n] for n in names if n in run.containers]
    phase = pod_phase(runs)
    old = (pod.get("status") or {}).get("conditions") or []
    return {
        "phase": phase,
        "conditions": _readiness_conditions(old, runs, phase, now),
        "hostIP": LOOPBACK,
        "podIP": LOOPBACK,
        "podIPs": [{"ip": LOOPBACK}],
        "startTime": run.started_at,
        "containerStatuses": [c.status() for c in runs],
    }
