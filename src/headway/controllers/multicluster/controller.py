"""The `MultiClusterRollout` controller: one release walked through clusters in order.

One step for a `MultiClusterRollout` (headway.dev/v1alpha1, control namespace):

    read the spec (`parse_order`; a bad one is an InvalidSpec status naming the field)
    -> read each Application, and its Rollouts in its destination cluster (`cluster_state`)
    -> decide (`headway.rollout.cluster_order.decide`, pure)
    -> abort the Rollouts of every reached cluster / request a sync of the next group's
       Applications / revert the failed release's image change in Git (the decision's
       `revert`, through Git convergence's writer: found by its `Headway-Revert-Of`
       trailer when done before, so never committed twice, a restart between the commit
       and the status write included) -> write the status once, with an Event when the
       phase changes

The Rollouts live in other clusters, where the manager's watches do not reach, so a step
that is still Progressing (or has aborts to make) looks again after `poll_seconds`.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from headway.clock import Clock
from headway.cluster.errors import ClusterError, Conflict, NotFound
from headway.cluster.events import record_event
from headway.cluster.protocol import Cluster
from headway.controllers.app import operations as ops
from headway.controllers.cluster_registry import ClusterRegistry, UnknownDestination
from headway.controllers.convergence.controller import REVERT_ANNOTATION, revert_in_git
from headway.controllers.convergence.facts import failed_release, is_aborted
from headway.controllers.convergence.revert import RevertOutcome, RevertResult
from headway.controllers.manager import ObjectKey
from headway.controllers.multicluster.stages import cluster_state, rollout_refs
from headway.model.obj import Obj
from headway.rollout import cluster_order as core
from headway.source.git import GitCache
from headway.source.git_commits import BotIdentity

__all__ = ["API", "FIELD_MANAGER", "KIND", "MultiClusterRolloutController"]

API = "headway.dev/v1alpha1"
KIND = "MultiClusterRollout"
ARGO_API = "argoproj.io/v1alpha1"
FIELD_MANAGER = "headway-multicluster-rollout"


class MultiClusterRolloutController:
    """Step controller for MultiClusterRollouts (the manager's `StepController`)."""

    name = "multicluster-rollouts"
    watches: Sequence[tuple[str, str]] = ((API, KIND), (ARGO_API, "Application"))

    def __init__(
        self, store: Cluster, *, clusters: ClusterRegistry, clock: Clock,
        poll_seconds: float = 5.0, git: GitCache | None = None,
        identity: BotIdentity | None = None,
    ) -> None:
        self._store = store
        self._clusters = clusters
        self._clock = clock
        self._poll = poll_seconds
        self._git = git  # None: no revert in Git (Git convergence alone, where it runs)
        self._identity = identity or BotIdentity("Headway", "headway@localhost")

    def keys_for(self, obj: Obj) -> Iterable[ObjectKey]:
        meta = obj.get("metadata") or {}
        namespace = str(meta.get("namespace") or "argocd")
        if obj.get("kind") == KIND:
            return [ObjectKey(namespace, str(meta.get("name")))]
        try:  # an Application: every MultiClusterRollout that names it
            owners = self._store.list(API, KIND, namespace=namespace)
        except ClusterError:
            return []
        return [ObjectKey(namespace, str(o["metadata"]["name"])) for o in owners
                if _names(o, str(meta.get("name")))]

    def step(self, key: ObjectKey) -> float | None:
        try:
            owner = self._store.get(API, KIND, key.name, key.namespace)
        except NotFound:
            return None
        try:
            order = core.parse_order(owner.get("spec") or {})
        except core.SpecError as error:
            self._write_status(owner, {"phase": "InvalidSpec", "message": str(error)})
            return None
        apps = {name: self._application(key.namespace, name) for name in order.applications}
        automated = [n for n, app in apps.items() if app is not None and _automated(app)]
        if automated:
            message = (f"spec: Application {', '.join(automated)} has syncPolicy.automated on;"
                       " turn it off, the MultiClusterRollout syncs it")
            self._write_status(owner, {"phase": "InvalidSpec", "message": message})
            return None
        states = {name: self._state(name, app) for name, app in apps.items()}
        return self._act(owner, order, apps, states)

    def _act(
        self, owner: Obj, order: core.Order, apps: Mapping[str, Obj | None],
        states: Mapping[str, core.ClusterState],
    ) -> float | None:
        status = owner.get("status") or {}
        revision = _revision(apps.get(order.groups[0][0]))
        aborted_before = bool(revision) and status.get("abortedRevision") == revision
        reverted = bool(revision) and status.get("revertedRevision") == revision
        decision = core.decide(order, states, aborted_before=aborted_before,
                               revision=revision, reverted=reverted or self._git is None)
        for name in decision.abort:
            self._abort(apps[name])
        for name in decision.sync:
            self._sync(apps[name])
        new_status: dict[str, Any] = {
            "phase": decision.phase.value,
            "group": decision.group,
            "revision": revision,
            "message": decision.message,
            "clusters": [_cluster_status(states[n]) for n in order.applications],
        }
        if decision.phase is core.Phase.ABORTED:
            new_status.update(_abort_record(status, decision, revision))
        if reverted:
            new_status.update(revertedRevision=revision, revert=status.get("revert"))
        outcome = self._revert([apps[n] for n in order.applications
                                if states[n].stage is core.Stage.FAILED]) \
            if decision.revert else None
        if outcome is not None and outcome.result is not RevertResult.RETRY:
            new_status["revertedRevision"] = decision.revert
        if outcome is not None:
            new_status["revert"] = {"result": outcome.result.value, "message": outcome.message,
                                    "commits": list(outcome.commits)}
        if status.get("phase") != decision.phase.value:
            warning = decision.phase is core.Phase.ABORTED
            record_event(self._store, self._clock, involved=owner,
                         reason=f"MultiClusterRollout{decision.phase.value}",
                         message=decision.message,
                         event_type="Warning" if warning else "Normal")
        self._write_status(owner, new_status)
        retry = outcome is not None and outcome.result is RevertResult.RETRY
        if decision.phase is core.Phase.PROGRESSING or decision.abort or retry:
            return self._poll
        return None  # Applications' changes bring the next step (a new revision)

    def _application(self, namespace: str, name: str) -> Obj | None:
        try:
            return self._store.get(ARGO_API, "Application", name, namespace)
        except NotFound:
            return None

    def _destination(self, app: Obj) -> Cluster:
        where = (app.get("spec") or {}).get("destination") or {}
        return self._clusters.resolve(server=where.get("server"), name=where.get("name")).cluster

    def _state(self, name: str, app: Obj | None) -> core.ClusterState:
        if app is None:
            return cluster_state(name, None, ())
        try:
            cluster = self._destination(app)
            rollouts = [found for ref in rollout_refs(app) if (found := _rollout(cluster, *ref))]
        except (UnknownDestination, ClusterError) as error:
            return core.ClusterState(name, core.Stage.UNKNOWN, f"cluster: {error}")
        return cluster_state(name, app, rollouts)

    def _abort(self, app: Obj | None) -> None:
        """Abort every Rollout the Application deployed, as `kubectl argo rollouts abort`."""
        if app is None:
            return
        try:
            cluster = self._destination(app)
            for namespace, name in rollout_refs(app):
                _abort_rollout(cluster, namespace, name)
        except (UnknownDestination, ClusterError):
            return  # unreachable now: the next step, `poll_seconds` later, tries again

    def _revert(self, failed_apps: Sequence[Obj | None]) -> RevertOutcome:
        """Revert in Git the image change of every aborted Rollout of the failed clusters."""
        assert self._git is not None  # decide() asks for a revert only with Git to write to
        outcomes: list[RevertOutcome] = []
        for app in failed_apps:
            if app is None or _revert_off(app):
                continue
            try:
                cluster = self._destination(app)
                rollouts = [r for ref in rollout_refs(app) if (r := _rollout(cluster, *ref))]
                releases = [failed_release(cluster, r) for r in rollouts if _failed(r)]
            except (UnknownDestination, ClusterError) as error:
                outcomes.append(RevertOutcome(RevertResult.RETRY, f"cluster: {error}"))
                continue
            for release in releases:
                if isinstance(release, str):
                    outcomes.append(RevertOutcome(RevertResult.REFUSED, release))
                else:
                    outcomes.append(revert_in_git(app, release, git=self._git,
                                                  identity=self._identity, attempts=3))
        return _worst(outcomes)

    def _sync(self, app: Obj | None) -> None:
        if app is None:
            return
        revision = _revision(app)
        operation = ops.sync_operation(initiated_by=FIELD_MANAGER,
                                       revisions=[revision] if revision else [])
        body = {k: v for k, v in app.items() if k != "status"}
        with contextlib.suppress(Conflict):  # changed since read: its change brings a step
            self._store.update({**body, "operation": operation}, field_manager=FIELD_MANAGER)

    def _write_status(self, owner: Obj, status: dict[str, Any]) -> None:
        if (owner.get("status") or {}) == status:
            return
        meta = owner["metadata"]
        with contextlib.suppress(Conflict):  # the owner changed: its change brings a step
            self._store.patch_status(API, KIND, meta["name"], meta["namespace"], status,
                                     resource_version=meta.get("resourceVersion"))


def _rollout(cluster: Cluster, namespace: str, name: str) -> Obj | None:
    """The Rollout, or None before the first sync created it (the Application lists it)."""
    try:
        return cluster.get(ARGO_API, "Rollout", name, namespace)
    except NotFound:
        return None


def _abort_rollout(cluster: Cluster, namespace: str, name: str) -> None:
    rollout = _rollout(cluster, namespace, name)
    if rollout is None:
        return
    status = copy.deepcopy(rollout.get("status") or {})
    if status.get("abort") is True:
        return
    status["abort"] = True
    with contextlib.suppress(Conflict):  # the next step reads it again and aborts it then
        cluster.patch_status(ARGO_API, "Rollout", name, namespace, status,
                             resource_version=rollout["metadata"].get("resourceVersion"))


def _failed(rollout: Obj) -> bool:
    """Aborted or Degraded on a revision other than its stable one (one that was fully
    promoted before its abort, in a cluster already Done, has nothing of its own to revert)."""
    status = rollout.get("status") or {}
    failed = is_aborted(rollout) or status.get("phase") == "Degraded"
    return failed and status.get("currentPodHash") != status.get("stableRS")


def _revert_off(app: Obj) -> bool:
    """`headway.dev/revert-on-abort: "false"` on the Application keeps Git as it is."""
    annotations = (app.get("metadata") or {}).get("annotations") or {}
    return str(annotations.get(REVERT_ANNOTATION, "")).lower() == "false"


def _worst(outcomes: Sequence[RevertOutcome]) -> RevertOutcome:
    if not outcomes:
        return RevertOutcome(RevertResult.REFUSED, "no aborted Rollout to revert")
    order = [RevertResult.RETRY, RevertResult.REFUSED, RevertResult.REVERTED,
             RevertResult.ALREADY_REVERTED]
    worst = min((o.result for o in outcomes), key=order.index)
    return RevertOutcome(worst, "; ".join(o.message for o in outcomes),
                         tuple(c for o in outcomes for c in o.commits))


def _names(owner: Obj, application: str) -> bool:
    try:
        return application in core.parse_order(owner.get("spec") or {}).applications
    except core.SpecError:
        return False


def _automated(app: Obj) -> bool:
    automated = ((app.get("spec") or {}).get("syncPolicy") or {}).get("automated")
    return isinstance(automated, dict) and automated.get("enabled", True) is not False


def _abort_record(status: Mapping[str, Any], decision: core.Decision, revision: str) -> Obj:
    """The abort as first seen, kept while it lasts: the release that failed (a revert that
    lands meanwhile, Git convergence's, is a new revision, walked once the failure clears) and
    where it failed (the walk's own aborts of the clusters it reached read as failures next)."""
    if status.get("phase") != core.Phase.ABORTED.value or not status.get("abortedRevision"):
        return {"abortedRevision": revision}
    return {
        "abortedRevision": status["abortedRevision"],
        "group": status.get("group", decision.group),
        "message": status.get("message") or decision.message,
    }


def _revision(app: Obj | None) -> str:
    return str((((app or {}).get("status") or {}).get("sync") or {}).get("revision") or "")


def _cluster_status(state: core.ClusterState) -> dict[str, Any]:
    out: dict[str, Any] = {"application": state.application, "stage": state.stage.value}
    if state.reason:
        out["reason"] = state.reason
    return out
