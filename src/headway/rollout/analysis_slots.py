"""Which analysis runs a Rollout needs now, and what their results do to it.

Canary: a step run while the current step is an `analysis` step, and a background run from
`startingStep` on (from the start when unset), both only mid-update (not on the initial
deploy, not once promoted, not while aborted or fully promoting). Blue-green: a
pre-promotion run before the active Service switches, a post-promotion run after it.
Each result: Successful lets the rollout continue, Inconclusive adds the
`InconclusiveAnalysis` pause condition, Failed or Error aborts with a message naming the run
and the metric. Runs that are no longer needed are superseded (terminated if running).

A run of the current revision that has Failed or Errored and that nothing superseded aborts
the rollout before any slot is looked at (`abort_on_failed_evidence`): a promote written in
the moment between the failure and the abort (`promoteFull`, or a step index moved past the
failed step, which would otherwise only supersede the run) never skips it.
"""

from __future__ import annotations

from typing import Any

from headway.model.rollout_steps import BackgroundAnalysis, RolloutAnalysis
from headway.rollout.analysis_runs import RunRequest
from headway.rollout.context import Draft
from headway.rollout.runs import RunInputs, reconcile_slot

__all__ = [
    "INCONCLUSIVE",
    "abort_on_failed_evidence",
    "reconcile_canary_analysis",
    "reconcile_run",
    "supersede_all",
]

INCONCLUSIVE = "InconclusiveAnalysis"
_KIND_WORDS = {
    "Step": "Step-based analysis",
    "Background": "Background analysis",
    "PrePromotion": "Pre-promotion analysis",
    "PostPromotion": "Post-promotion analysis",
}


def request_for(
    analysis: RolloutAnalysis | BackgroundAnalysis, rollout_type: str, step: int | None
) -> RunRequest:
    meta = analysis.analysis_run_metadata
    return RunRequest(
        rollout_type=rollout_type,
        step_index=step,
        templates=analysis.templates,
        args=analysis.args,
        dry_run=analysis.dry_run,
        measurement_retention=analysis.measurement_retention,
        labels=dict(meta.labels) if meta else {},
        annotations=dict(meta.annotations) if meta else {},
    )


def _inputs(d: Draft) -> RunInputs:
    ctx = d.ctx
    return RunInputs(
        rollout=ctx.obj,
        templates=ctx.templates,
        stable_hash=ctx.stable_hash,
        current_hash=ctx.current_hash,
        revision=ctx.revision,
    )


def reconcile_run(
    d: Draft, request: RunRequest, *, holder: dict[str, Any], key: str
) -> dict[str, Any] | None:
    """Create, adopt or judge the run of one slot; its status goes to `holder[key]`."""
    named = (holder.get(key) or {}).get("name")
    # While paused, a step run is left as it is; other runs only while paused by an
    # Inconclusive result (a background run that fails during a pause step still aborts).
    held = (
        d.pause_conditions
        if request.rollout_type == "Step"
        else [c for c in d.pause_conditions if c.get("reason") == INCONCLUSIVE]
    )
    if held and holder.get(key):
        return holder.get(key)
    resumed = bool(d.status.get("controllerPause")) and not d.pause_conditions
    outcome = reconcile_slot(
        request, runs=d.ctx.runs, named=named, resumed=resumed, inputs=_inputs(d)
    )
    d.supersede_runs.extend(outcome.superseded)
    if outcome.error is not None:
        d.invalid = f"{_KIND_WORDS[request.rollout_type]}: {outcome.error}"
        return None
    if outcome.created is not None:
        d.create_runs.append(outcome.created)
        d.event(
            "AnalysisRunCreated",
            f"Created {request.rollout_type} AnalysisRun '{outcome.created['metadata']['name']}'",
        )
    holder[key] = outcome.status
    run = outcome.run
    if run is not None and run.phase == "Inconclusive":
        d.add_pause(INCONCLUSIVE)
    elif run is not None and run.phase in ("Failed", "Error"):
        detail = f": {run.message}" if run.message else ""
        d.abort(f"{_KIND_WORDS[request.rollout_type]} run '{run.name}' phase {run.phase}{detail}")
    return outcome.status


def abort_on_failed_evidence(d: Draft) -> None:
    """Abort when a run of the current revision Failed or Errored and was never superseded
    (not while promoted, aborted already, or rolling back within `rollbackWindow`)."""
    ctx = d.ctx
    promoted = bool(ctx.stable_hash) and ctx.stable_hash == ctx.current_hash
    if d.aborted or promoted or ctx.within_rollback_window:
        return
    failed = [
        r
        for r in ctx.runs
        if r.pod_hash == ctx.current_hash and not r.superseded and r.phase in ("Failed", "Error")
    ]
    if not failed:
        return
    run = max(failed, key=lambda r: (r.created, r.name))
    words = _KIND_WORDS.get(run.rollout_type, "Analysis")
    detail = f": {run.message}" if run.message else ""
    d.abort(f"{words} run '{run.name}' phase {run.phase}{detail}")


def supersede_all(d: Draft, holder: dict[str, Any], *keys: str) -> None:
    for key in keys:
        entry = holder.pop(key, None)
        if entry and entry.get("name"):
            d.supersede_runs.append(str(entry["name"]))


def reconcile_canary_analysis(d: Draft, *, index: int, promoted: bool) -> None:
    canary = d.ctx.rollout.spec.strategy.canary
    assert canary is not None
    holder = d.status.setdefault("canary", {})
    keys = ("currentStepAnalysisRunStatus", "currentBackgroundAnalysisRunStatus")
    if promoted or d.aborted or d.status.get("promoteFull") or d.ctx.within_rollback_window:
        supersede_all(d, holder, *keys)
        return
    step = canary.steps[index] if index < len(canary.steps) else None
    current = holder.get(keys[0]) or {}
    named = d.ctx.run_named(current.get("name"))
    stale = named is not None and named.step_index != index
    if step is None or step.analysis is None or stale:
        supersede_all(d, holder, keys[0])
    if step is not None and step.analysis is not None:
        reconcile_run(d, request_for(step.analysis, "Step", index), holder=holder, key=keys[0])
    background = canary.analysis
    if background is None or not background.templates:
        supersede_all(d, holder, keys[1])
    elif index >= (background.starting_step or 0):
        request = request_for(background, "Background", None)
        reconcile_run(d, request, holder=holder, key=keys[1])
    if d.aborted:
        supersede_all(d, holder, *keys)
