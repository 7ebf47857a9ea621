"""The Rollout controller: one step per call, read like Argo Rollouts' `reconcile`.

    read the Rollout -> build the context (its ReplicaSets, AnalysisRuns, templates)
    -> decide (pure, `headway.rollout.reconcile.decide`) -> carry out the plan
    -> write status once -> return when to look again

It watches Rollouts, ReplicaSets and AnalysisRuns (the last two map to the Rollout that
owns them), so a pod becoming available or a run finishing wakes the Rollout at once.
Killed at any point, it resumes from the persisted status: runs are named
deterministically and adopted, ReplicaSets are found by hash, writes are idempotent.

It never acts on a stale view of its AnalysisRuns: right before carrying out the plan and
again right before writing the status, it reads the runs again; when one changed phase since
the decision (a run that failed meanwhile), it does nothing more and decides again at once.
Events are recorded only once the status they describe is written.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from headway.clock import Clock
from headway.cluster.errors import ClusterError, Conflict, NotFound
from headway.cluster.protocol import Cluster
from headway.controllers.manager import ObjectKey
from headway.controllers.rollout.actions import RouterFactory, execute_plan, note, record_events
from headway.controllers.rollout.inputs import (
    ARGO_API,
    build_context,
    owned_runs,
    parse_rollout_object,
)
from headway.controllers.rollout.routers import traffic_routers
from headway.controllers.rollout.workload import referencing_rollouts, resolve_workload
from headway.model.obj import Obj
from headway.model.rollout import Rollout
from headway.rollout import conditions as cond
from headway.rollout.context import RolloutContext
from headway.rollout.reconcile import decide
from headway.rollout.run_evidence import runs_changed
from headway.rollout.runs import run_view_of
from headway.rollout.status_shape import status_problem, usable_conditions
from headway.routers.control.reconciler import TrafficRoutingError

__all__ = ["API_REFUSAL_RETRY_SECONDS", "RolloutController"]

API_REFUSAL_RETRY_SECONDS = 10.0
log = logging.getLogger(__name__)


class RolloutController:
    name = "rollouts"
    watches: Sequence[tuple[str, str]] = (
        (ARGO_API, "Rollout"),
        ("apps/v1", "ReplicaSet"),
        (ARGO_API, "AnalysisRun"),
        ("apps/v1", "Deployment"),  # the template of a Rollout with a workloadRef
        (ARGO_API, "Experiment"),  # an experiment step's
    )

    def __init__(
        self,
        cluster: Cluster,
        clock: Clock,
        *,
        routers: RouterFactory | None = None,
        after_decide: Callable[[ObjectKey], None] | None = None,
    ):
        self._cluster = cluster
        self._clock = clock
        self._routers = routers or traffic_routers(cluster)
        # a test hook: runs between deciding and acting, to widen that window on purpose
        self._after_decide = after_decide

    def keys_for(self, obj: Obj) -> Iterable[ObjectKey]:
        meta = obj.get("metadata") or {}
        namespace = str(meta.get("namespace") or "default")
        if obj.get("kind") == "Rollout":
            return [ObjectKey(namespace, str(meta.get("name")))]
        if obj.get("kind") == "Deployment":
            return [ObjectKey(namespace, n) for n in referencing_rollouts(self._cluster, obj)]
        refs = meta.get("ownerReferences") or []
        return [
            ObjectKey(namespace, str(r["name"]))
            for r in refs
            if r.get("kind") == "Rollout" and r.get("controller")
        ]

    def step(self, key: ObjectKey) -> float | None:
        try:
            obj = self._cluster.get(ARGO_API, "Rollout", key.name, key.namespace)
        except NotFound:
            return None
        if obj["metadata"].get("deletionTimestamp"):
            return None
        rollout, problem = parse_rollout_object(obj)
        if rollout is None:
            return self._write_invalid(obj, problem)
        malformed = status_problem(obj.get("status"))
        if malformed is not None:
            return self._write_invalid(obj, malformed)  # decide nothing from garbage
        try:
            obj, unresolved = resolve_workload(self._cluster, obj)
            if unresolved is not None:
                return self._write_invalid(obj, unresolved)
            return self._decide_and_act(key, obj, rollout)
        except (Conflict, NotFound):
            raise  # a race with another writer: the manager steps again soon
        except ClusterError as err:
            return self._write_api_refusal(obj, err)

    def _decide_and_act(self, key: ObjectKey, obj: Obj, rollout: Rollout) -> float | None:
        ctx = build_context(self._cluster, self._clock, obj, rollout)
        plan = decide(ctx)
        if self._after_decide is not None:
            self._after_decide(key)
        if self._stale(ctx):
            return 0.0
        try:
            status = execute_plan(self._cluster, self._clock, obj, plan, self._routers(obj))
        except TrafficRoutingError as err:
            note(self._cluster, self._clock, obj, "TrafficRoutingError", str(err), warning=True)
            return 5.0
        if self._stale(ctx):
            return 0.0
        cond.remove_condition(status, cond.API_REFUSED)
        stored = self._store_status(obj, status)
        if stored == "conflict":
            return 0.0  # someone (a CLI command) changed the Rollout: decide again
        if stored == "gone":
            return None
        record_events(self._cluster, self._clock, obj, plan)
        return plan.requeue_after

    def _stale(self, ctx: RolloutContext) -> bool:
        """A run changed phase since `ctx` was read: deciding again beats acting on it."""
        fresh = [run_view_of(r) for r in owned_runs(self._cluster, ctx.obj)]
        return runs_changed(ctx.runs, fresh)

    def _store_status(self, obj: Obj, status: dict[str, Any]) -> str:
        """Write the status once, conditioned on the Rollout read: "written", "unchanged",
        "conflict" (it changed since) or "gone"."""
        if status == (obj.get("status") or {}):
            return "unchanged"
        meta = obj["metadata"]
        try:
            self._cluster.patch_status(
                ARGO_API,
                "Rollout",
                meta["name"],
                meta.get("namespace"),
                status,
                resource_version=meta.get("resourceVersion"),
            )
        except Conflict:
            return "conflict"
        except NotFound:
            return "gone"
        return "written"

    def _write_api_refusal(self, obj: Obj, err: ClusterError) -> float:
        """The API refused a write of the plan (admission, RBAC, throttling): say so on the
        Rollout, with the server's message naming the object, and try again later. The rest
        of the status stays as it was: the plan was not carried out."""
        found = obj.get("status")
        status = dict(found) if isinstance(found, dict) else {}
        if not usable_conditions(status):
            status["conditions"] = []
        reason = type(err).__name__
        message = f"the API server refused a write ({reason}): {err}"
        cond.set_condition(status, cond.API_REFUSED, true=True, reason=reason, message=message,
                           now=self._clock.now())
        try:
            if self._store_status(obj, status) == "written":
                note(self._cluster, self._clock, obj, cond.API_REFUSED, message, warning=True)
        except ClusterError as also:  # the status write refused too: the log is all there is
            log.warning("Rollout %s/%s: %s; and its status cannot be written: %s",
                        obj["metadata"].get("namespace"), obj["metadata"]["name"], message, also)
        return API_REFUSAL_RETRY_SECONDS

    def _write_invalid(self, obj: Obj, problem: str) -> float | None:
        """Report a spec or status the controller cannot run (InvalidSpec, Degraded) and
        change nothing else; the malformed status fields stay for their writer to mend."""
        found = obj.get("status")
        status = dict(found) if isinstance(found, dict) else {}
        if not usable_conditions(status):
            status["conditions"] = []
        cond.set_condition(
            status,
            cond.INVALID_SPEC,
            true=True,
            reason=cond.INVALID_SPEC,
            message=problem,
            now=self._clock.now(),
        )
        status["phase"], status["message"] = "Degraded", f"{cond.INVALID_SPEC}: {problem}"
        status["observedGeneration"] = str(obj["metadata"].get("generation", 1))
        stored = self._store_status(obj, status)
        if stored == "written":
            note(self._cluster, self._clock, obj, cond.INVALID_SPEC, problem, warning=True)
        return 0.0 if stored == "conflict" else None
