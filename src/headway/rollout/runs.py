"""A Rollout's AnalysisRuns as the decisions see them, and the life of one analysis "slot".

A slot is one kind of run for the current pod hash: a canary step's run, the background run,
or blue-green pre-/post-promotion. Its current run is the one the status names; when the
status names none (a controller that created a run and died before writing status), the
newest run of the slot not yet superseded is adopted, so a restart never starts a second run.
A run leaves its slot (superseded) on abort, promotion, a new template, or a retry after an
Inconclusive result; the controller then terminates it if it is still running and marks it
with `SUPERSEDED_ANNOTATION`.

Outcomes, as in Argo Rollouts: Successful lets the rollout continue; Inconclusive pauses it
(`InconclusiveAnalysis`); Failed or Error aborts it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from headway.rollout.analysis_runs import (
    ROLLOUT_TYPE_LABEL,
    STEP_INDEX_LABEL,
    AnalysisRunError,
    RunRequest,
    build_analysis_run,
    free_run_name,
)
from headway.rollout.replica_sets import HASH_LABEL

__all__ = [
    "SUPERSEDED_ANNOTATION",
    "RunInputs",
    "RunView",
    "SlotOutcome",
    "reconcile_slot",
    "run_view_of",
]

SUPERSEDED_ANNOTATION = "rollouts.headway.dev/superseded"
COMPLETED = ("Successful", "Failed", "Error", "Inconclusive")


@dataclass(frozen=True)
class RunView:
    name: str
    rollout_type: str
    step_index: int | None
    pod_hash: str
    phase: str
    message: str
    superseded: bool
    created: str

    @property
    def completed(self) -> bool:
        return self.phase in COMPLETED


def _failure_detail(status: Mapping[str, Any]) -> str:
    """Which metric decided the run, when the run's own message does not say."""
    results = status.get("metricResults")
    for result in results if isinstance(results, list) else []:
        if not isinstance(result, Mapping):
            continue  # a malformed entry written through the API says nothing
        phase = result.get("phase")
        if phase in ("Failed", "Error", "Inconclusive"):
            detail = f'Metric "{result.get("name")}" assessed {phase}'
            return f"{detail}: {result['message']}" if result.get("message") else detail
    return ""


def run_view_of(run: Mapping[str, Any]) -> RunView:
    meta = run.get("metadata") or {}
    labels = meta.get("labels") or {}
    found = run.get("status")
    status: Mapping[str, Any] = found if isinstance(found, Mapping) else {}  # garbage: Pending
    step = str(labels.get(STEP_INDEX_LABEL, ""))
    message = str(status.get("message") or "") or _failure_detail(status)
    return RunView(
        name=str(meta.get("name", "")),
        rollout_type=str(labels.get(ROLLOUT_TYPE_LABEL, "")),
        step_index=int(step) if step.isdigit() else None,
        pod_hash=str(labels.get(HASH_LABEL, "")),
        phase=str(status.get("phase") or "Pending"),
        message=message,
        superseded=(meta.get("annotations") or {}).get(SUPERSEDED_ANNOTATION) == "true",
        created=str(meta.get("creationTimestamp") or ""),
    )


@dataclass(frozen=True)
class RunInputs:
    """What naming and building a run needs besides the request."""

    rollout: Mapping[str, Any]
    templates: Mapping[tuple[str, str], Mapping[str, Any]]
    stable_hash: str
    current_hash: str
    revision: int


@dataclass(frozen=True)
class SlotOutcome:
    run: RunView | None  # the current run (None when one is being created)
    created: dict[str, Any] | None  # the run object to create
    superseded: tuple[str, ...]
    status: dict[str, Any] | None  # the RolloutAnalysisRunStatus to write
    error: str | None = None  # the run could not be built (InvalidSpec)


def _adoptable(
    runs: tuple[RunView, ...], request: RunRequest, pod_hash: str, named: str | None
) -> RunView | None:
    by_name = next((r for r in runs if named and r.name == named), None)
    if by_name is not None and (by_name.rollout_type, by_name.step_index, by_name.pod_hash) == (
        request.rollout_type,
        request.step_index,
        pod_hash,
    ):
        return by_name
    candidates = [
        r
        for r in runs
        if r.rollout_type == request.rollout_type
        and r.step_index == request.step_index
        and r.pod_hash == pod_hash
        and not r.superseded
    ]
    return max(candidates, key=lambda r: (r.created, r.name), default=None)


def reconcile_slot(
    request: RunRequest,
    *,
    runs: tuple[RunView, ...],
    named: str | None,
    resumed: bool,
    inputs: RunInputs,
) -> SlotOutcome:
    """The slot's current run, creating one when there is none or when a user resumed the
    rollout after an Inconclusive run paused it (`resumed`: the controller had paused and
    every pause condition is gone)."""
    current = _adoptable(runs, request, inputs.current_hash, named)
    superseded: tuple[str, ...] = ()
    if current is not None and not (current.phase == "Inconclusive" and resumed):
        status = {"name": current.name, "status": current.phase, "message": current.message}
        return SlotOutcome(current, None, (), {k: v for k, v in status.items() if v})
    if current is not None:
        superseded = (current.name,)
    rollout_name = str(inputs.rollout["metadata"]["name"])
    base = request.base_name(rollout_name, inputs.current_hash, inputs.revision)
    name = free_run_name(base, {r.name for r in runs})
    try:
        obj = build_analysis_run(
            request,
            rollout=inputs.rollout,
            templates=inputs.templates,
            name=name,
            stable_hash=inputs.stable_hash,
            current_hash=inputs.current_hash,
            revision=inputs.revision,
        )
    except AnalysisRunError as err:
        return SlotOutcome(None, None, superseded, None, error=str(err))
    return SlotOutcome(None, obj, superseded, {"name": name, "status": "Pending"})
