"""What Git convergence needs to know about an aborted Rollout, read from the cluster.

`abort_of()` tells one abort from another: the failed pod-template hash, when it aborted
(`status.abortedAt`) and the failed AnalysisRun — the same image released again and aborted
again has the same pod hash, but not the same abort.

`failed_release()` answers: which pod-template hash failed, which image(s) differ between the
stable ReplicaSet's template and the failed one, and which AnalysisRun and metric failed it
(from the run's status, as the analysis controller wrote it). Reading only; no writes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from headway.cluster.protocol import Cluster
from headway.model.obj import Obj

__all__ = [
    "ARGO_API",
    "HASH_LABEL",
    "AbortIdentity",
    "FailedMetric",
    "FailedRelease",
    "ImageSwap",
    "abort_of",
    "failed_release",
    "is_aborted",
]

ARGO_API = "argoproj.io/v1alpha1"
HASH_LABEL = "rollouts-pod-template-hash"
_FAILED_RUN_PHASES = ("Failed", "Error")


@dataclass(frozen=True)
class AbortIdentity:
    """Which abort: a pod hash aborted at a time, after a run (each retry is a new run)."""

    pod_hash: str
    aborted_at: str  # status.abortedAt ("" when the abort did not say)
    analysis_run: str  # the newest Failed/Error run of the pod hash ("" for a manual abort)


@dataclass(frozen=True)
class ImageSwap:
    """One container whose image the failed revision changed."""

    container: str
    stable: str
    failed: str


@dataclass(frozen=True)
class FailedMetric:
    name: str
    phase: str
    value: str  # the last measurement's value as the run recorded it ("" when none)
    message: str

    def describe(self) -> str:
        text = f"{self.name} {self.phase}"
        if self.value:
            text += f" (last value {self.value})"
        if self.message:
            text += f": {self.message}"
        return text


@dataclass(frozen=True)
class FailedRelease:
    namespace: str
    rollout: str
    pod_hash: str
    stable_hash: str
    swaps: tuple[ImageSwap, ...]
    analysis_run: str  # "" when the abort came from elsewhere (a user, a deadline)
    failed_metrics: tuple[FailedMetric, ...]
    abort_message: str


def is_aborted(rollout: Mapping[str, Any]) -> bool:
    """Aborted as Argo Rollouts marks it: `status.abort`, or Degraded with RolloutAborted."""
    status = rollout.get("status") or {}
    if status.get("abort") is True:
        return True
    message = str(status.get("message") or "")
    return status.get("phase") == "Degraded" and message.startswith("RolloutAborted")


def _containers(template: Mapping[str, Any]) -> dict[str, str]:
    spec = template.get("spec") or {}
    out: dict[str, str] = {}
    for container in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
        if isinstance(container, Mapping) and container.get("image"):
            out[str(container.get("name") or "")] = str(container["image"])
    return out


def image_swaps(stable: Mapping[str, Any], failed: Mapping[str, Any]) -> tuple[ImageSwap, ...]:
    """Containers (by name) whose image differs between two pod templates."""
    before, after = _containers(stable), _containers(failed)
    return tuple(
        ImageSwap(name, before[name], image)
        for name, image in after.items()
        if name in before and before[name] != image
    )


def _owned_by(obj: Obj, rollout: Obj) -> bool:
    uid = (rollout.get("metadata") or {}).get("uid")
    refs = (obj.get("metadata") or {}).get("ownerReferences") or []
    return any(r.get("kind") == "Rollout" and (not uid or r.get("uid") == uid) for r in refs)


def _replica_set_template(
    cluster: Cluster, rollout: Obj, pod_hash: str
) -> Mapping[str, Any] | None:
    namespace = rollout["metadata"].get("namespace") or "default"
    for rs in cluster.list(
        "apps/v1", "ReplicaSet", namespace=namespace, label_selector={HASH_LABEL: pod_hash}
    ):
        if _owned_by(rs, rollout):
            template = (rs.get("spec") or {}).get("template")
            return template if isinstance(template, Mapping) else None
    return None


def _last_value(metric: Mapping[str, Any]) -> str:
    """The value of the last failing measurement (else of the last one)."""
    measured = [m for m in metric.get("measurements") or [] if isinstance(m, Mapping)]
    failing = [m for m in measured if m.get("phase") in _FAILED_RUN_PHASES]
    chosen = (failing or measured)[-1:]
    return str(chosen[0].get("value") or "") if chosen else ""


def _failed_metrics(run: Obj) -> tuple[FailedMetric, ...]:
    results = (run.get("status") or {}).get("metricResults") or []
    return tuple(
        FailedMetric(
            str(m.get("name")), str(m.get("phase")), _last_value(m), str(m.get("message") or "")
        )
        for m in results
        if m.get("phase") in _FAILED_RUN_PHASES and not m.get("dryRun")
    )


def _failed_run(cluster: Cluster, rollout: Obj, pod_hash: str) -> Obj | None:
    namespace = rollout["metadata"].get("namespace") or "default"
    runs = [
        run
        for run in cluster.list(
            ARGO_API, "AnalysisRun", namespace=namespace, label_selector={HASH_LABEL: pod_hash}
        )
        if _owned_by(run, rollout) and (run.get("status") or {}).get("phase") in _FAILED_RUN_PHASES
    ]
    runs.sort(key=lambda r: str((r.get("metadata") or {}).get("creationTimestamp") or ""))
    return runs[-1] if runs else None


def abort_of(cluster: Cluster, rollout: Obj) -> AbortIdentity:
    status = rollout.get("status") or {}
    pod_hash = str(status.get("currentPodHash") or "")
    run = _failed_run(cluster, rollout, pod_hash) if pod_hash else None
    return AbortIdentity(
        pod_hash=pod_hash,
        aborted_at=str(status.get("abortedAt") or ""),
        analysis_run=str(run["metadata"]["name"]) if run else "",
    )


def failed_release(cluster: Cluster, rollout: Obj) -> FailedRelease | str:
    """The failed revision of an aborted Rollout, or why it cannot be told."""
    meta, status = rollout["metadata"], rollout.get("status") or {}
    pod_hash = str(status.get("currentPodHash") or "")
    stable_hash = str(status.get("stableRS") or "")
    if not pod_hash or not stable_hash or pod_hash == stable_hash:
        return "the Rollout has no failed revision distinct from its stable one"
    failed_template = (rollout.get("spec") or {}).get("template") or {}
    stable_template = _replica_set_template(cluster, rollout, stable_hash)
    if stable_template is None:
        return f"the stable ReplicaSet (pod hash {stable_hash}) was not found"
    run = _failed_run(cluster, rollout, pod_hash)
    return FailedRelease(
        namespace=str(meta.get("namespace") or "default"),
        rollout=str(meta["name"]),
        pod_hash=pod_hash,
        stable_hash=stable_hash,
        swaps=image_swaps(stable_template, failed_template),
        analysis_run=str(run["metadata"]["name"]) if run else "",
        failed_metrics=_failed_metrics(run) if run else (),
        abort_message=str(status.get("message") or ""),
    )


def describe_failure(release: FailedRelease) -> Sequence[str]:
    """Lines for a commit message or an Event: the run and each failed metric."""
    if not release.analysis_run:
        return [f"Abort: {release.abort_message or 'aborted without a failed AnalysisRun'}"]
    lines = [f"AnalysisRun: {release.namespace}/{release.analysis_run}"]
    lines += [f"Failed metric: {m.describe()}" for m in release.failed_metrics]
    return lines
