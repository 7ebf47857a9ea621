"""What the demo watches: a compact view of the Rollout and its AnalysisRuns, what changed
between two views (the narration), and the mesh's request counters per revision.

`rollout_view` and `narrate` are pure, so the narration is tested without any process.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

__all__ = [
    "RevisionRequests",
    "RolloutView",
    "RunView",
    "narrate",
    "revision_requests",
    "rollout_view",
    "run_views",
]

HASH_LABEL = "rollouts-pod-template-hash"


@dataclass(frozen=True)
class RunView:
    name: str
    phase: str
    metrics: tuple[tuple[str, str, str], ...]  # (metric, phase, last value)

    def failed_metrics(self) -> list[tuple[str, str]]:
        return [(m, v) for m, p, v in self.metrics if p in ("Failed", "Error")]


@dataclass(frozen=True)
class RolloutView:
    phase: str
    message: str
    image: str
    current_hash: str
    stable_hash: str
    step: int | None
    steps: int
    weight: int
    aborted: bool
    runs: tuple[RunView, ...] = ()

    @property
    def tag(self) -> str:
        return self.image.rpartition(":")[2] if ":" in self.image else self.image

    @property
    def healthy_at(self) -> bool:
        return self.phase == "Healthy" and self.current_hash == self.stable_hash


def _steps(spec: Mapping[str, Any]) -> int:
    canary = (spec.get("strategy") or {}).get("canary") or {}
    return len(canary.get("steps") or [])


def rollout_view(rollout: Mapping[str, Any], runs: Sequence[RunView] = ()) -> RolloutView:
    spec, status = rollout.get("spec") or {}, rollout.get("status") or {}
    containers = ((spec.get("template") or {}).get("spec") or {}).get("containers") or [{}]
    weights = (status.get("canary") or {}).get("weights") or {}
    step = status.get("currentStepIndex")
    return RolloutView(
        phase=str(status.get("phase") or "Pending"),
        message=str(status.get("message") or ""),
        image=str(containers[0].get("image") or ""),
        current_hash=str(status.get("currentPodHash") or ""),
        stable_hash=str(status.get("stableRS") or ""),
        step=int(step) if isinstance(step, int | str) and str(step).isdigit() else None,
        steps=_steps(spec),
        weight=int((weights.get("canary") or {}).get("weight") or 0),
        aborted=bool(status.get("abort")),
        runs=tuple(runs),
    )


def _last_value(metric: Mapping[str, Any]) -> str:
    measurements = metric.get("measurements") or []
    return str(measurements[-1].get("value") or "") if measurements else ""


def run_views(runs: Sequence[Mapping[str, Any]], pod_hash: str) -> tuple[RunView, ...]:
    """The AnalysisRuns of one revision, oldest first."""
    chosen = [
        r
        for r in runs
        if ((r.get("metadata") or {}).get("labels") or {}).get(HASH_LABEL) == pod_hash
    ]
    chosen.sort(key=lambda r: str(r["metadata"].get("creationTimestamp") or ""))
    return tuple(
        RunView(
            name=str(r["metadata"]["name"]),
            phase=str((r.get("status") or {}).get("phase") or "Pending"),
            metrics=tuple(
                (str(m.get("name")), str(m.get("phase")), _last_value(m))
                for m in (r.get("status") or {}).get("metricResults") or []
            ),
        )
        for r in chosen
    )


def _step_lines(before: RolloutView | None, after: RolloutView) -> list[str]:
    lines = []
    if after.step is not None and after.steps and (before is None or before.step != after.step):
        if after.step >= after.steps:
            lines.append(f"all {after.steps} steps done: canary weight {after.weight}%")
        else:
            lines.append(f"step {after.step + 1}/{after.steps}: canary weight {after.weight}%")
    elif before is not None and before.weight != after.weight:
        lines.append(f"canary weight {before.weight}% -> {after.weight}%")
    return lines


def _run_lines(before: RolloutView | None, after: RolloutView) -> list[str]:
    known = {r.name: r for r in (before.runs if before else ())}
    lines = []
    for run in after.runs:
        old = known.get(run.name)
        if old is None:
            lines.append(f"analysis {run.name} started")
        if old is not None and old.metrics != run.metrics:
            for metric, phase, value in run.metrics:
                if (metric, phase, value) not in old.metrics and value:
                    lines.append(f"  {metric} = {value} ({phase})")
        if (old is None or old.phase != run.phase) and run.phase not in ("Pending", "Running"):
            failed = ", ".join(f"{m} = {v}" for m, v in run.failed_metrics())
            lines.append(f"analysis {run.name}: {run.phase}" + (f" ({failed})" if failed else ""))
    return lines


def narrate(before: RolloutView | None, after: RolloutView) -> list[str]:
    """Sentences for what changed from `before` to `after` (empty when nothing did)."""
    lines = []
    if before is not None and before.image != after.image:
        lines.append(f"Rollout spec now deploys {after.image}")
    if not after.aborted:  # an abort resets the step index; the weight line would mislead
        lines += _step_lines(before, after)
    lines += _run_lines(before, after)
    newly_aborted = after.aborted and (before is None or not before.aborted)
    if newly_aborted:
        why = after.message or "the rollout was aborted"
        lines.append(f"ABORTED, all traffic back to stable: {why}")
    if before is None or (before.phase, before.healthy_at) != (after.phase, after.healthy_at):
        said = after.message and not newly_aborted
        lines.append(f"phase {after.phase}" + (f": {after.message}" if said else ""))
    return lines


@dataclass(frozen=True)
class RevisionRequests:
    requests: int
    errors: int


def revision_requests(metrics_text: str, pod_hash: str) -> RevisionRequests:
    """Requests the mesh routed to one pod-template hash, and how many were answered 5xx."""
    total = errors = 0.0
    for family in text_string_to_metric_families(metrics_text):
        if family.name != "headway_requests":
            continue
        for sample in family.samples:
            if not sample.name.endswith("_total"):
                continue
            if sample.labels.get("rollouts_pod_template_hash") != pod_hash:
                continue
            total += sample.value
            if str(sample.labels.get("code", "")).startswith("5"):
                errors += sample.value
    return RevisionRequests(int(total), int(errors))
