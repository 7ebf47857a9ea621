"""Blue-green decisions, as Argo Rollouts' `rolloutBlueGreen` takes them.

The new ReplicaSet comes up behind the preview Service (with `previewReplicaCount` pods when
set); once it is available, pre-promotion analysis runs; then the rollout pauses
(`BlueGreenPause`) unless auto-promotion is on: without `autoPromotionSeconds` it promotes at
once, with it after that many seconds, and with `autoPromotionEnabled: false` only when a user
promotes. Promotion scales the new ReplicaSet to full size, switches the active Service to it,
and runs post-promotion analysis; when that succeeds the new ReplicaSet becomes stable and the
previous one is scaled down after `scaleDownDelaySeconds`. A failure before or after the
switch aborts: the active Service points at the stable ReplicaSet again and the new one is
scaled down after `abortScaleDownDelaySeconds` (0: never).
"""

from __future__ import annotations

from datetime import timedelta

from headway.kubetime import parse_time
from headway.model.rollout import BlueGreenStrategy
from headway.rollout.analysis_slots import (
    abort_on_failed_evidence,
    reconcile_run,
    request_for,
    supersede_all,
)
from headway.rollout.canary import promote
from headway.rollout.context import Draft
from headway.rollout.replica_sets import ReplicaSetView

__all__ = ["reconcile_blue_green"]

PAUSE = "BlueGreenPause"
_KEYS = ("prePromotionAnalysisRunStatus", "postPromotionAnalysisRunStatus")


def _strategy(d: Draft) -> BlueGreenStrategy:
    bg = d.ctx.rollout.spec.strategy.blue_green
    assert bg is not None
    return bg


def _scale_down_old(d: Draft, active_hash: str) -> None:
    """Keep the active ReplicaSet; the others go after scaleDownDelaySeconds."""
    bg = _strategy(d)
    old = [
        rs
        for rs in sorted(d.ctx.sets.all, key=lambda rs: (rs.revision, rs.created), reverse=True)
        if rs.pod_hash not in (active_hash, d.ctx.current_hash) and rs.replicas > 0
    ]
    limit = bg.scale_down_delay_revision_limit
    d.scale_down_after_delay(old, bg.scale_down_delay_seconds, revision_limit=limit)


def _services(d: Draft, active: str) -> None:
    bg = _strategy(d)
    blue_green = d.status.setdefault("blueGreen", {})
    blue_green["activeSelector"] = active
    d.selectors[bg.active_service] = active
    if bg.preview_service:
        blue_green["previewSelector"] = d.ctx.current_hash
        d.selectors[bg.preview_service] = d.ctx.current_hash


def _auto_promote_due(d: Draft) -> bool:
    """The pause before the switch: whether it is over."""
    bg = _strategy(d)
    if d.status.get("promoteFull"):
        return True
    if bg.auto_promotion_enabled and bg.auto_promotion_seconds == 0:
        return True
    cond = d.pause_condition(PAUSE)
    if cond is None:
        if d.status.get("controllerPause"):
            return True  # a user promoted
        d.add_pause(PAUSE)
        if bg.auto_promotion_enabled:
            d.wake_in(bg.auto_promotion_seconds)
        return False
    if not bg.auto_promotion_enabled:
        return False
    start = parse_time(cond.get("startTime")) or d.ctx.now
    left = (start + timedelta(seconds=bg.auto_promotion_seconds) - d.ctx.now).total_seconds()
    if left > 0:
        d.wake_in(left)
        return False
    return True


def _before_switch(d: Draft, new: ReplicaSetView, holder: dict[str, object]) -> str:
    """Preview, pre-promotion analysis, pause, scale-up; returns the active hash to use."""
    bg, spec = _strategy(d), d.ctx.rollout.spec
    stable_hash = d.ctx.stable_hash
    promoting = bool(d.status.get("blueGreen", {}).get("scaleUpPreviewCheckPoint"))
    preview_size = bg.preview_replica_count if bg.preview_replica_count is not None else None
    target = spec.replicas if promoting or preview_size is None else preview_size
    d.scale(new.name, target)
    if new.available < target or new.replicas != target:
        return stable_hash
    if bg.pre_promotion_analysis is not None and not promoting:
        request = request_for(bg.pre_promotion_analysis, "PrePromotion", None)
        run = reconcile_run(d, request, holder=holder, key=_KEYS[0])
        if d.aborted or (run or {}).get("status") != "Successful":
            return stable_hash
    if spec.paused or d.pause_conditions_other_than(PAUSE):
        return stable_hash
    if not promoting and not _auto_promote_due(d):
        return stable_hash
    d.remove_pause(PAUSE)
    if target < spec.replicas:
        d.status["blueGreen"]["scaleUpPreviewCheckPoint"] = True
        d.scale(new.name, spec.replicas)
        d.wake_in(0)
        return stable_hash
    return d.ctx.current_hash


def _after_switch(d: Draft, holder: dict[str, object]) -> None:
    bg = _strategy(d)
    if bg.post_promotion_analysis is not None and not d.status.get("promoteFull"):
        request = request_for(bg.post_promotion_analysis, "PostPromotion", None)
        run = reconcile_run(d, request, holder=holder, key=_KEYS[1])
        if d.aborted or (run or {}).get("status") != "Successful":
            return
    promote(d, "Completed blue-green update")


def _aborted(d: Draft, new: ReplicaSetView) -> None:
    _services(d, d.ctx.stable_hash)
    delay = _strategy(d).abort_scale_down_delay_seconds
    if delay > 0 and d.scale_down_deadline_passed(new, delay):
        d.scale(new.name, 0)


def reconcile_blue_green(d: Draft) -> None:
    ctx, spec = d.ctx, d.ctx.rollout.spec
    new = ctx.sets.new
    assert new is not None
    holder = d.status.setdefault("blueGreen", {})
    if ctx.sets.stable is None or ctx.stable_hash == ctx.current_hash:
        d.scale(new.name, spec.replicas)
        if ctx.sets.stable is None or not holder.get("activeSelector"):
            promote(d, "Initial deploy")
        _services(d, ctx.current_hash)
        _scale_down_old(d, ctx.current_hash)
        return
    abort_on_failed_evidence(d)
    if d.aborted:
        supersede_all(d, holder, *_KEYS)
        _aborted(d, new)
        return
    stable = ctx.sets.stable
    d.scale(stable.name, spec.replicas)
    active = str(holder.get("activeSelector") or ctx.stable_hash)
    if active != ctx.current_hash:
        active = _before_switch(d, new, holder)
    _services(d, active)
    if d.aborted:
        supersede_all(d, holder, *_KEYS)
        _aborted(d, new)
        return
    if active == ctx.current_hash:
        _after_switch(d, holder)
        if d.aborted:
            supersede_all(d, holder, *_KEYS)
            _aborted(d, new)
            return
    if d.status.get("stableRS") == ctx.current_hash:
        holder.pop("scaleUpPreviewCheckPoint", None)
        _scale_down_old(d, ctx.current_hash)
