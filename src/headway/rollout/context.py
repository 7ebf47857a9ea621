"""The reconcile context of one Rollout: its inputs, sorted by pure helpers, and the draft
of its next status that the decisions fill in.

`RolloutContext` is frozen input (the rollout, its ReplicaSets split into new / stable /
others, its AnalysisRuns, the templates they reference, the time). `Draft` is the one
mutable thing of a reconcile: the decisions append to it in order, and `Draft.plan()`
freezes it into the `Plan` the controller executes, with the status to write once.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from headway.kubetime import format_time
from headway.model.rollout import Rollout
from headway.rollout.plan import Plan, TrafficDecision
from headway.rollout.pod_metadata import RoleMetadata
from headway.rollout.replica_sets import ReplicaSetView, SortedReplicaSets
from headway.rollout.runs import RunView

if TYPE_CHECKING:
    from headway.rollout.experiment_step import ExperimentView
    from headway.rollout.restart import PodView

__all__ = ["Draft", "RolloutContext"]


@dataclass(frozen=True)
class RolloutContext:
    obj: Mapping[str, Any]  # the Rollout as stored
    rollout: Rollout
    current_hash: str
    sets: SortedReplicaSets
    runs: tuple[RunView, ...]
    templates: Mapping[tuple[str, str], Mapping[str, Any]]
    now: datetime
    pods: tuple[PodView, ...] = ()  # loaded only while a restart is pending
    experiments: tuple[ExperimentView, ...] = ()  # the Experiments this Rollout owns
    # pod hash -> {"template", "selector"} of its ReplicaSet (an experiment step's specRef)
    replica_set_templates: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @property
    def status(self) -> Mapping[str, Any]:
        return self.obj.get("status") or {}

    @property
    def name(self) -> str:
        return self.rollout.name

    @property
    def stable_hash(self) -> str:
        return str(self.status.get("stableRS") or "")

    @property
    def revision(self) -> int:
        return self.sets.new.revision if self.sets.new is not None else 0

    @property
    def within_rollback_window(self) -> bool:
        """The current template is an older revision than the stable one, at most
        `rollbackWindow.revisions` back: a rollback that skips steps and analysis."""
        window = self.rollout.spec.rollback_window
        new, stable = self.sets.new, self.sets.stable
        if window is None or not window.revisions or new is None or stable is None:
            return False
        if not (new.created, new.name) < (stable.created, stable.name):
            return False
        between = [rs for rs in self.sets.all if new.created < rs.created < stable.created]
        return len(between) < window.revisions

    def run_named(self, name: str | None) -> RunView | None:
        return next((r for r in self.runs if name and r.name == name), None)


@dataclass
class Draft:
    """The next status and the actions decided so far (mutable only within one reconcile)."""

    ctx: RolloutContext
    status: dict[str, Any]
    scales: dict[str, int] = field(default_factory=dict)
    deadlines: dict[str, str | None] = field(default_factory=dict)
    selectors: dict[str, str] = field(default_factory=dict)
    traffic: TrafficDecision | None = None
    create_runs: list[dict[str, Any]] = field(default_factory=list)
    supersede_runs: list[str] = field(default_factory=list)
    delete_pods: list[str] = field(default_factory=list)
    delete_replica_sets: list[str] = field(default_factory=list)
    delete_runs: list[str] = field(default_factory=list)
    events: list[tuple[str, str, str]] = field(default_factory=list)
    wakes: list[float] = field(default_factory=list)
    abort_message: str | None = None
    workload_replicas: int | None = None
    pod_metadata: dict[str, RoleMetadata] = field(default_factory=dict)
    invalid: str | None = None  # a reason the spec cannot be run (InvalidSpec)
    create_experiments: list[dict[str, Any]] = field(default_factory=list)
    terminate_experiments: list[str] = field(default_factory=list)

    @classmethod
    def start(cls, ctx: RolloutContext) -> Draft:
        return cls(ctx=ctx, status=copy.deepcopy(dict(ctx.status)))

    # ---- pause and abort, as Argo's pause context keeps them ---------------------------

    @property
    def aborted(self) -> bool:
        return bool(self.status.get("abort"))

    @property
    def pause_conditions(self) -> list[dict[str, Any]]:
        return list(self.status.get("pauseConditions") or [])

    def pause_condition(self, reason: str) -> dict[str, Any] | None:
        return next((c for c in self.pause_conditions if c.get("reason") == reason), None)

    def pause_conditions_other_than(self, reason: str) -> list[dict[str, Any]]:
        return [c for c in self.pause_conditions if c.get("reason") != reason]

    def add_pause(self, reason: str) -> None:
        """Add a pause condition (once) and mark the pause as the controller's."""
        if self.pause_condition(reason) is not None:
            return
        entry = {"reason": reason, "startTime": format_time(self.ctx.now)}
        self.status["pauseConditions"] = [*self.pause_conditions, entry]
        self.status["controllerPause"] = True

    def remove_pause(self, reason: str) -> None:
        kept = [c for c in self.pause_conditions if c.get("reason") != reason]
        self.status["pauseConditions"] = kept or None

    def clear_pauses(self) -> None:
        self.status["pauseConditions"] = None
        self.status["controllerPause"] = False

    def abort(self, message: str) -> None:
        if not self.aborted:
            self.status["abortedAt"] = format_time(self.ctx.now)
            self.abort_message = message
        self.status["abort"] = True
        self.clear_pauses()

    def clear_abort(self) -> None:
        self.status["abort"] = False
        self.status.pop("abortedAt", None)

    # ---- actions -------------------------------------------------------------------------

    def scale(self, name: str | None, replicas: int) -> None:
        if name is not None:
            self.scales[name] = max(0, replicas)

    def event(self, reason: str, message: str, *, warning: bool = False) -> None:
        self.events.append(("Warning" if warning else "Normal", reason, message))

    def wake_in(self, seconds: float) -> None:
        self.wakes.append(max(0.0, seconds))

    def scale_down_deadline_passed(self, rs: ReplicaSetView, delay: int) -> bool:
        """Set (first time) or read the scale-down deadline of `rs`; True once it has passed.

        Shared by canary and blue-green: the deadline is `delay` seconds after the first
        reconcile that asked, and the draft wakes the controller when it falls due.
        """
        if rs.scale_down_deadline is None:
            self.deadlines[rs.name] = format_time(self.ctx.now + timedelta(seconds=delay))
            self.wake_in(delay)
            return delay == 0
        left = (rs.scale_down_deadline - self.ctx.now).total_seconds()
        if left > 0:
            self.wake_in(left)
        return left <= 0

    def scale_down_after_delay(
        self, old: Sequence[ReplicaSetView], delay: int, *, revision_limit: int | None
    ) -> None:
        """Scale `old` (newest first) to zero once each one's deadline has passed; beyond
        `scaleDownDelayRevisionLimit` of them, at once (Argo's scaleDownDelayHelper)."""
        for kept, rs in enumerate(old):
            beyond = revision_limit is not None and kept >= revision_limit
            if beyond or self.scale_down_deadline_passed(rs, delay):
                self.scale(rs.name, 0)

    def plan(self) -> Plan:
        status = {k: v for k, v in self.status.items() if v is not None}
        return Plan(
            status=status,
            scales=dict(self.scales),
            deadlines=dict(self.deadlines),
            service_selectors=dict(self.selectors),
            traffic=self.traffic,
            create_runs=tuple(self.create_runs),
            supersede_runs=tuple(dict.fromkeys(self.supersede_runs)),
            delete_pods=tuple(self.delete_pods),
            delete_replica_sets=tuple(self.delete_replica_sets),
            delete_runs=tuple(self.delete_runs),
            events=tuple(self.events),
            workload_replicas=self.workload_replicas,
            pod_metadata=dict(self.pod_metadata),
            create_experiments=tuple(self.create_experiments),
            terminate_experiments=tuple(dict.fromkeys(self.terminate_experiments)),
            requeue_after=min(self.wakes) if self.wakes else None,
        )
