"""Canary decisions, in the order Argo Rollouts' `rolloutCanary` takes them:

1. analysis runs (step run for an `analysis` step, background run from `startingStep`);
   Inconclusive pauses, Failed/Error aborts;
2. replica counts: without a router, weights approximated by pods (`basic_canary_replicas`);
   with one, pods to carry the routed weight, `setCanaryScale`, `dynamicStableScale`,
   `scaleDownDelaySeconds` for the previous stable and `abortScaleDownDelaySeconds` for an
   aborted canary (0: never scaled down);
3. Services and traffic: stable/canary Service selectors, the weight, header and mirror routes;
4. step progression: one step per reconcile; a pause adds a `CanaryPauseStep` pause
   condition (with a duration it ends by itself); past the last step, once the canary is
   fully available, it becomes the stable ReplicaSet.
"""

from __future__ import annotations

import math
from datetime import timedelta

from headway.kube.fenceposts import resolve_fenceposts
from headway.kubetime import parse_time
from headway.model.rollout import CanaryStrategy
from headway.rollout import canary_steps as steps_of
from headway.rollout.analysis_slots import abort_on_failed_evidence, reconcile_canary_analysis
from headway.rollout.canary_replicas import (
    ReplicaSetScale,
    TrafficWeights,
    basic_canary_replicas,
    traffic_routed_canary_replicas,
)
from headway.rollout.context import Draft
from headway.rollout.experiment_step import (
    experiment_destinations,
    experiment_name,
    experiment_step_done,
    terminate_experiments,
)
from headway.rollout.plan import HeaderRoute, TrafficDecision, WeightDestination
from headway.rollout.progress_threshold import progress_reached
from headway.rollout.replica_sets import ReplicaSetView

__all__ = ["reconcile_canary"]

PAUSE_STEP = "CanaryPauseStep"


def _scale_view(rs: ReplicaSetView | None) -> ReplicaSetScale | None:
    return None if rs is None else ReplicaSetScale(rs.name, rs.replicas, rs.available)


def _strategy(d: Draft) -> CanaryStrategy:
    canary = d.ctx.rollout.spec.strategy.canary
    assert canary is not None
    return canary


def _index(d: Draft) -> int:
    steps = _strategy(d).steps
    return int(d.status.get("currentStepIndex") or 0) if steps else 0


def _promoted(d: Draft) -> bool:
    return bool(d.status.get("stableRS")) and d.status.get("stableRS") == d.ctx.current_hash


def desired_weight(d: Draft) -> int:
    """The canary weight this reconcile aims for."""
    if d.aborted:
        return 0
    if _promoted(d) or d.status.get("promoteFull"):
        return 100
    return steps_of.set_weight_at(_strategy(d).steps, _index(d))


def _reconcile_basic_replicas(d: Draft) -> None:
    ctx, spec = d.ctx, d.ctx.rollout.spec
    canary = _strategy(d)
    posts = resolve_fenceposts(canary.max_surge, canary.max_unavailable, spec.replicas)
    new, stable = ctx.sets.new, ctx.sets.stable
    scale = basic_canary_replicas(
        spec_replicas=spec.replicas,
        weight=desired_weight(d),
        fenceposts=posts,
        new=_scale_view(new),
        stable=_scale_view(stable) if stable is not new else None,
        others=[s for rs in ctx.sets.others if (s := _scale_view(rs)) is not None],
    )
    d.scale(new.name if new else None, scale.canary)
    if stable is not None and stable is not new:
        d.scale(stable.name, scale.stable)
    _drain_others(d, budget_floor=spec.replicas - posts.max_unavailable)


def _drain_others(d: Draft, *, budget_floor: int) -> None:
    """Scale older ReplicaSets down without dropping below the minimum available pods."""
    available = sum(rs.available for rs in d.ctx.sets.all)
    budget = available - budget_floor
    for rs in d.ctx.sets.others:
        if rs.replicas == 0 or budget <= 0:
            continue
        target = max(0, rs.replicas - budget)
        budget -= rs.replicas - target
        d.scale(rs.name, target)


def _aborted_canary_replicas(d: Draft, new: ReplicaSetView) -> int:
    delay = _strategy(d).abort_scale_down_delay_seconds
    if delay == 0:
        return new.replicas  # 0 means: never scale an aborted canary down
    return 0 if d.scale_down_deadline_passed(new, delay) else new.replicas


def _reconcile_routed_replicas(d: Draft) -> None:
    ctx, spec, canary = d.ctx, d.ctx.rollout.spec, _strategy(d)
    new, stable = ctx.sets.new, ctx.sets.stable
    weights = (d.ctx.status.get("canary") or {}).get("weights") or {}
    current = TrafficWeights(
        int((weights.get("canary") or {}).get("weight") or 0),
        int((weights.get("stable") or {}).get("weight") or 100),
    )
    scale = traffic_routed_canary_replicas(
        spec_replicas=spec.replicas,
        weight=desired_weight(d),
        max_weight=100,
        canary_scale_replicas=steps_of.scale_replicas(
            steps_of.canary_scale_at(canary.steps, _index(d)), spec.replicas
        )
        if not (d.aborted or _promoted(d) or d.status.get("promoteFull"))
        and _index(d) < len(canary.steps)
        else None,
        dynamic_stable_scale=canary.dynamic_stable_scale,
        min_pods_per_replicaset=canary.min_pods_per_replica_set,
        aborted=d.aborted,
        current_weights=current,
    )
    if new is not None and stable is not new:
        aborting = d.aborted and not canary.dynamic_stable_scale
        keep = _aborted_canary_replicas(d, new) if aborting else scale.canary
        d.scale(new.name, keep)
        if not d.aborted and new.scale_down_deadline is not None:
            d.deadlines[new.name] = None
    if stable is not None and stable is not new:
        d.scale(stable.name, scale.stable)
    elif new is not None:
        d.scale(new.name, spec.replicas)
    running = [rs for rs in ctx.sets.others if rs.replicas > 0]
    if _promoted(d) and not canary.dynamic_stable_scale:
        limit = canary.scale_down_delay_revision_limit
        d.scale_down_after_delay(running, canary.scale_down_delay_seconds, revision_limit=limit)
    else:
        for rs in running:
            d.scale(rs.name, 0)


def _reconcile_services_and_traffic(d: Draft) -> None:
    canary, ctx = _strategy(d), d.ctx
    stable_hash = str(d.status.get("stableRS") or ctx.current_hash)
    if canary.stable_service:
        d.selectors[canary.stable_service] = stable_hash
    if canary.canary_service:
        d.selectors[canary.canary_service] = ctx.current_hash
    if canary.traffic_routing is None:
        return
    weight = 0 if _promoted(d) else desired_weight(d)
    new = ctx.sets.new
    if weight > 0 and (new is None or new.available == 0):
        weight = 0
    elif weight > 0 and new is not None and not _promoted(d):
        # the new weight waits for the pods decided to carry it (Argo keeps the previous one)
        needed = d.scales.get(new.name, math.ceil(ctx.rollout.spec.replicas * weight / 100))
        if not _reached(d, new, needed) and not d.status.get("promoteFull"):
            weight = min(weight, steps_of.previous_set_weight(canary.steps, _index(d)))
    ending = d.aborted or _promoted(d)
    no_routes = ending or _managed_routes_withdrawn(d)
    routes = () if no_routes else _header_routes(d)
    mirrors = () if no_routes else steps_of.mirror_routes_at(canary.steps, _index(d))
    additional = () if ending or d.status.get("promoteFull") else _experiment_shares(d)
    d.traffic = TrafficDecision(
        weight,
        routes,
        mirror_routes=mirrors,
        remove_managed_routes=no_routes,
        canary_hash=ctx.current_hash,
        stable_hash=stable_hash,
        additional=additional,
    )
    d.status.setdefault("canary", {})["weights"] = _weights_status(
        d, weight=weight, stable_hash=stable_hash, additional=additional
    )


def _header_routes(d: Draft) -> tuple[HeaderRoute, ...]:
    """The header routes the steps up to the current one leave, and a removal for every
    managed route no step names any more (on the routers that carry managed routes)."""
    canary = _strategy(d)
    routes = steps_of.header_routes_at(canary.steps, _index(d))
    routing = canary.traffic_routing
    if routing is None or not (routing.istio or routing.alb or routing.apisix or routing.plugins):
        return routes
    return routes + steps_of.unnamed_routes(canary.steps, routing.managed_routes)


def _managed_routes_withdrawn(d: Draft) -> bool:
    """Whether every header and mirror route goes, whatever the steps say: on a full promotion
    request, and while the new ReplicaSet has no available pod (a route to a canary Service
    with no ready pod sends the users it matches to errors). Argo's reconcileTrafficRouting
    removes them in both cases too, but then re-sets the current step's route; Headway keeps
    that one away as well, and puts the routes in force back once a canary pod is available."""
    new = d.ctx.sets.new
    return bool(d.status.get("promoteFull")) or new is None or new.available == 0


def _experiment_shares(d: Draft) -> tuple[WeightDestination, ...]:
    """The weighted templates of the running experiment step, if the current step is one."""
    steps, index = _strategy(d).steps, _index(d)
    step = steps[index].experiment if index < len(steps) else None
    return () if step is None else experiment_destinations(d, step, index)


def _weights_status(
    d: Draft, *, weight: int, stable_hash: str, additional: tuple[WeightDestination, ...]
) -> dict[str, object]:
    """`status.canary.weights` as Argo's `calculateWeightStatus` writes it: the experiment
    templates' shares come out of the stable's."""
    canary = _strategy(d)
    weights: dict[str, object] = {
        "canary": {
            "weight": weight,
            "podTemplateHash": d.ctx.current_hash,
            "serviceName": canary.canary_service,
        },
        "stable": {
            "weight": 100 - weight - sum(a.weight for a in additional),
            "podTemplateHash": stable_hash,
            "serviceName": canary.stable_service,
        },
    }
    if additional:
        weights["additional"] = [
            {"weight": a.weight, "serviceName": a.service_name,
             "podTemplateHash": a.pod_template_hash}
            for a in additional
        ]
    return weights


def _at_desired_counts(d: Draft) -> bool:
    """Every ReplicaSet at its decided count, and the canary's pods available."""
    for rs in d.ctx.sets.all:
        target = d.scales.get(rs.name, rs.replicas)
        if rs.replicas != target or rs.status_replicas != target:
            return False
    new = d.ctx.sets.new
    return new is None or _reached(d, new, d.scales.get(new.name, new.replicas))


def _reached(d: Draft, new: ReplicaSetView, desired: int) -> bool:
    """Enough of the canary's `desired` pods are available (`replicaProgressThreshold`)."""
    threshold = _strategy(d).replica_progress_threshold
    return progress_reached(threshold, available=new.available, desired=desired)


def _pause_step_done(d: Draft, duration: float | None) -> bool:
    cond = d.pause_condition(PAUSE_STEP)
    if cond is None:
        if d.status.get("controllerPause"):
            return True  # a user removed the pause condition: promoted
        d.add_pause(PAUSE_STEP)
        if duration is not None:
            d.wake_in(duration)
        return False
    if duration is None:
        return False
    start = parse_time(cond.get("startTime")) or d.ctx.now
    left = (start + timedelta(seconds=duration) - d.ctx.now).total_seconds()
    if left > 0:
        d.wake_in(left)
        return False
    return True


def _step_completed(d: Draft) -> bool:
    canary, index = _strategy(d), _index(d)
    step = canary.steps[index]
    if step.pause is not None:
        return _pause_step_done(d, step.pause.duration)
    if step.set_weight is not None or step.set_canary_scale is not None:
        verified = ((d.status.get("canary") or {}).get("weights") or {}).get("verified")
        return _at_desired_counts(d) and verified is not False
    if step.experiment is not None:
        return experiment_step_done(d, step.experiment, index)
    if step.analysis is not None:
        run = (d.status.get("canary") or {}).get("currentStepAnalysisRunStatus") or {}
        return run.get("status") == "Successful"
    return step.set_header_route is not None or step.set_mirror_route is not None


def _reconcile_steps(d: Draft) -> None:
    canary = _strategy(d)
    total = len(canary.steps)
    if d.ctx.rollout.spec.paused or d.aborted or _promoted(d):
        return
    if d.status.get("promoteFull") and total:
        d.status["currentStepIndex"] = total
        d.clear_pauses()
    index = _index(d)
    if index < total and not d.pause_conditions_other_than(PAUSE_STEP):
        if _step_completed(d):
            label = steps_of.step_label(canary.steps[index])
            d.status["currentStepIndex"] = index + 1
            d.remove_pause(PAUSE_STEP)
            d.status.setdefault("canary", {}).pop("currentStepAnalysisRunStatus", None)
            d.event("RolloutStepCompleted", f"Rollout step {index + 1}/{total} completed ({label})")
            d.wake_in(0)
        return
    new = d.ctx.sets.new
    if index >= total and new is not None and _reached(d, new, d.ctx.rollout.spec.replicas):
        reason = (
            "Full promotion requested"
            if d.status.get("promoteFull")
            else (f"Completed all {total} canary steps")
        )
        promote(d, reason)


def promote(d: Draft, reason: str) -> None:
    """Mark the current ReplicaSet stable (Argo's promoteStable)."""
    d.clear_pauses()
    d.clear_abort()
    d.status["promoteFull"] = False
    if d.status.get("stableRS") != d.ctx.current_hash:
        d.status["stableRS"] = d.ctx.current_hash
        d.event(
            "RolloutCompleted",
            f"Rollout completed update to revision {d.ctx.revision} "
            f"({d.ctx.current_hash}): {reason}",
        )
        d.wake_in(0)


def reconcile_canary(d: Draft) -> None:
    """Steps 1-4 of the module docstring, on a rollout whose template has not just changed."""
    canary = _strategy(d)
    if d.ctx.sets.stable is None:
        d.scale(d.ctx.sets.new.name if d.ctx.sets.new else None, d.ctx.rollout.spec.replicas)
        for rs in d.ctx.sets.others:
            d.scale(rs.name, 0)
        d.status["stableRS"] = ""
        if canary.steps:
            d.status["currentStepIndex"] = len(canary.steps)
        promote(d, "Initial deploy")
        _reconcile_services_and_traffic(d)
        return
    abort_on_failed_evidence(d)
    reconcile_canary_analysis(d, index=_index(d), promoted=_promoted(d))
    if d.aborted and canary.steps and not _promoted(d):
        d.status["currentStepIndex"] = 0
    if canary.traffic_routing is None:
        _reconcile_basic_replicas(d)
    else:
        _reconcile_routed_replicas(d)
    _reconcile_services_and_traffic(d)
    _reconcile_steps(d)
    _experiments_off_step(d)


def _experiments_off_step(d: Draft) -> None:
    """Only the current experiment step's Experiment runs (none once aborted or promoted)."""
    steps, index = _strategy(d).steps, _index(d)
    current = index < len(steps) and steps[index].experiment is not None
    keep = None
    if current and not d.aborted and not d.status.get("promoteFull") and not _promoted(d):
        keep = experiment_name(d, index)
    terminate_experiments(d, keep=keep)
    if keep is None:
        d.status.setdefault("canary", {}).pop("currentExperiment", None)
