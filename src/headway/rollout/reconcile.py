"""One reconcile of a Rollout, decided: `decide(ctx) -> Plan`. Purely computational.

A straight list, as Argo Rollouts' controller reads:

1. reject a spec Headway will not run (InvalidSpec: what `model/support.py` lists — plugin
   steps, a setMirrorRoute through a router plugin, routers Headway does not drive, a
   workloadRef to anything but a Deployment — and a missing analysis template);
2. a new pod template (or new steps) resets the steps, pauses and abort; going back to the
   stable template, or to a revision inside `rollbackWindow`, skips every step;
3. the strategy's decisions (`canary.reconcile_canary`, `bluegreen.reconcile_blue_green`);
4. the status: counters, conditions, the progress deadline, the phase and its message.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from headway.model import support
from headway.model.rollout_steps import AnalysisTemplateRef
from headway.model.selectors import SelectorError, selector_from_object
from headway.rollout import conditions as cond
from headway.rollout.analysis_runs import template_key
from headway.rollout.analysis_slots import supersede_all
from headway.rollout.bluegreen import reconcile_blue_green
from headway.rollout.canary import reconcile_canary
from headway.rollout.context import Draft, RolloutContext
from headway.rollout.history import reconcile_history
from headway.rollout.plan import Plan
from headway.rollout.pod_metadata import role_metadata
from headway.rollout.replica_sets import HASH_LABEL
from headway.rollout.restart import reconcile_restart
from headway.rollout.status_conditions import update_conditions
from headway.rollout.workload_ref import workload_observed_generation, workload_replicas

__all__ = ["decide", "step_hash"]


def step_hash(ctx: RolloutContext) -> str:
    """A short hash of the canary steps; a change restarts them (Argo's currentStepHash)."""
    strategy = ((ctx.obj.get("spec") or {}).get("strategy") or {}).get("canary") or {}
    data = json.dumps(strategy.get("steps") or [], sort_keys=True).encode()
    return hashlib.sha256(data).hexdigest()[:10]


def _template_refs(ctx: RolloutContext) -> list[AnalysisTemplateRef]:
    strategy = ctx.rollout.spec.strategy
    refs: list[AnalysisTemplateRef] = []
    if strategy.canary is not None:
        for step in strategy.canary.steps:
            refs.extend(step.analysis.templates if step.analysis else ())
        refs.extend(strategy.canary.analysis.templates if strategy.canary.analysis else ())
    if strategy.blue_green is not None:
        for analysis in (
            strategy.blue_green.pre_promotion_analysis,
            strategy.blue_green.post_promotion_analysis,
        ):
            refs.extend(analysis.templates if analysis else ())
    return refs


def invalid_spec(ctx: RolloutContext) -> str | None:
    gaps = support.rollout_gaps(ctx.obj.get("spec") or {})
    if gaps:
        return gaps[0].describe(("spec",))
    for ref in _template_refs(ctx):
        if template_key(ref) not in ctx.templates:
            kind, name = template_key(ref)
            return f"{kind} '{name}' not found"
    return None


def _changed(ctx: RolloutContext) -> bool:
    status = ctx.status
    if status.get("currentPodHash") != ctx.current_hash:
        return True
    canary = ctx.rollout.spec.strategy.canary
    return canary is not None and status.get("currentStepHash") != step_hash(ctx)


def _reset(d: Draft) -> None:
    """Argo's resetRolloutStatus, then the fast-track checks."""
    ctx = d.ctx
    d.clear_pauses()
    d.clear_abort()
    d.status["promoteFull"] = False
    supersede_all(
        d,
        d.status.setdefault("canary", {}),
        "currentStepAnalysisRunStatus",
        "currentBackgroundAnalysisRunStatus",
    )
    blue_green = d.status.setdefault("blueGreen", {})
    supersede_all(d, blue_green, "prePromotionAnalysisRunStatus", "postPromotionAnalysisRunStatus")
    blue_green.pop("scaleUpPreviewCheckPoint", None)
    canary = ctx.rollout.spec.strategy.canary
    steps = len(canary.steps) if canary is not None else 0
    d.status["currentStepIndex"] = 0 if steps else None
    if steps and ctx.stable_hash == ctx.current_hash:
        d.status["currentStepIndex"] = steps
        d.event("SkipSteps", "Rollback to stable ReplicaSets")
    elif steps and ctx.within_rollback_window:
        d.status["currentStepIndex"] = steps
        d.event("SkipSteps", "Rollback to active ReplicaSets within RollbackWindow")
    d.status["currentPodHash"] = ctx.current_hash
    if canary is not None:
        d.status["currentStepHash"] = step_hash(ctx)
    d.event("RolloutUpdated", f"Rollout updated to revision {ctx.revision}")
    d.wake_in(0)


def _counters(d: Draft) -> None:
    ctx = d.ctx
    sets = ctx.sets.all
    new = ctx.sets.new
    d.status.update(
        replicas=sum(rs.status_replicas for rs in sets),
        updatedReplicas=new.status_replicas if new else 0,
        readyReplicas=sum(rs.ready for rs in sets),
        availableReplicas=sum(rs.available for rs in sets),
        observedGeneration=str((ctx.obj.get("metadata") or {}).get("generation", 1)),
        currentPodHash=ctx.current_hash,
    )
    d.status.update(scale_status(ctx, d.status))
    d.status["workloadObservedGeneration"] = workload_observed_generation(ctx)
    d.status.setdefault("canary", {})
    if ctx.rollout.spec.strategy.blue_green is None:
        d.status.pop("blueGreen", None)
    if ctx.rollout.spec.strategy.canary is not None:
        d.status["currentStepHash"] = step_hash(ctx)
    if not d.status.get("controllerPause") or d.pause_conditions:
        return
    d.status["controllerPause"] = False  # a user resumed; Argo clears it the same way


def scale_status(ctx: RolloutContext, status: Mapping[str, Any]) -> dict[str, Any]:
    """What the scale subresource shows an autoscaler (`status.HPAReplicas`, `selector`).

    As Argo writes them: a canary counts the pods of every ReplicaSet and shows the Rollout's
    selector; a blue-green Rollout with an active ReplicaSet counts only the active pods and
    shows that ReplicaSet's selector (the Rollout's plus its pod hash), so an HPA averages
    over the pods that take traffic, not over an idle preview.
    """
    selector = dict((ctx.obj.get("spec") or {}).get("selector") or {})
    counted = ctx.sets.all
    active_hash = str((status.get("blueGreen") or {}).get("activeSelector") or "")
    active = next((rs for rs in counted if active_hash and rs.pod_hash == active_hash), None)
    if ctx.rollout.spec.strategy.blue_green is not None and active is not None:
        labels = {**(selector.get("matchLabels") or {}), HASH_LABEL: active.pod_hash}
        selector, counted = {**selector, "matchLabels": labels}, (active,)
    return {
        "HPAReplicas": sum(rs.status_replicas for rs in counted),
        "selector": format_label_selector(selector),
    }


def format_label_selector(selector: Mapping[str, Any]) -> str:
    """Kubernetes' FormatLabelSelector: `a=b,c in (d,e)`, `<none>` for an empty one."""
    try:
        text = str(selector_from_object(selector, path="spec.selector"))
    except SelectorError:
        return ""  # the spec check reports a malformed selector
    return text or "<none>"


def _workload_scale(d: Draft) -> None:
    new = d.ctx.sets.new
    if new is not None:
        replicas = d.scales.get(new.name, new.replicas)
        d.workload_replicas = workload_replicas(d.ctx, new_replicas=replicas)


def decide(ctx: RolloutContext) -> Plan:
    d = Draft.start(ctx)
    problem = invalid_spec(ctx)
    if problem is None and ctx.sets.new is None:
        problem = "the ReplicaSet for the current template does not exist yet"
    if problem is None:
        if d.aborted:
            d.clear_pauses()  # an aborted rollout is not paused (Argo clears both)
        if _changed(ctx):
            _reset(d)
        elif ctx.rollout.spec.strategy.canary is not None:
            reconcile_canary(d)
        else:
            reconcile_blue_green(d)
        if not d.aborted:
            reconcile_restart(d, ctx.pods)
        reconcile_history(d)
        _workload_scale(d)
        d.pod_metadata = role_metadata(ctx)
        problem = d.invalid
    if problem is not None:
        d = Draft.start(ctx)
        d.invalid = problem
    finish_status(d)
    return d.plan()


def finish_status(d: Draft) -> None:
    """Counters, conditions and phase (Argo's calculateRolloutConditions + phase)."""
    _counters(d)
    update_conditions(d)
    phase, message = cond.rollout_phase(dict(d.ctx.obj.get("spec") or {}), d.status)
    d.status["phase"], d.status["message"] = phase, message or None
    if d.status.get("abortedAt") and not d.aborted:
        d.status.pop("abortedAt")
