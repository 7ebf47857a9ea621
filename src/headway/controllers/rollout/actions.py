"""Carrying out a Rollout `Plan` against the cluster, in Argo's order.

AnalysisRuns first (create is idempotent by name: a run that exists is left alone), then
superseded runs (terminated if still running, marked so they are never adopted again),
ReplicaSets (scale and scale-down deadlines), Service selectors, traffic through the
router's reconciler; the status is written last, once, by the caller, and the events
(`record_events`) only after it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from headway.clock import Clock
from headway.cluster.errors import ClusterError, NotFound
from headway.cluster.events import record_event
from headway.cluster.protocol import Cluster
from headway.controllers.rollout.inputs import ARGO_API, FIELD_MANAGER, write_replica_set
from headway.controllers.rollout.role_metadata import sync_role_metadata
from headway.controllers.rollout.workload import scale_workload
from headway.model.obj import Obj
from headway.rollout.plan import Plan, TrafficDecision
from headway.rollout.replica_sets import HASH_LABEL, SCALE_DOWN_DEADLINE_ANNOTATION
from headway.rollout.runs import COMPLETED, SUPERSEDED_ANNOTATION
from headway.routers.control.reconciler import TrafficRoutingReconciler

__all__ = ["RouterFactory", "execute_plan", "note", "record_events"]

RouterFactory = Callable[[Obj], TrafficRoutingReconciler | None]
TERMINATOR = "headway-rollouts-controller-terminate"


def _create_runs(cluster: Cluster, plan: Plan) -> None:
    for run in plan.create_runs:
        meta = run["metadata"]
        try:
            cluster.get(ARGO_API, "AnalysisRun", meta["name"], meta["namespace"])
        except NotFound:
            cluster.apply(run, field_manager=FIELD_MANAGER)


def _supersede_runs(cluster: Cluster, namespace: str, plan: Plan) -> None:
    for name in plan.supersede_runs:
        try:
            run = cluster.get(ARGO_API, "AnalysisRun", name, namespace)
        except NotFound:
            continue
        body: dict[str, Any] = {
            "apiVersion": ARGO_API,
            "kind": "AnalysisRun",
            "metadata": {
                "name": name,
                "namespace": namespace,
                "annotations": {SUPERSEDED_ANNOTATION: "true"},
            },
        }
        if (run.get("status") or {}).get("phase") not in COMPLETED:
            body["spec"] = {"terminate": True}
        cluster.apply(body, field_manager=TERMINATOR, force=True)


def _replica_sets(cluster: Cluster, namespace: str, plan: Plan) -> None:
    for name in sorted(set(plan.scales) | set(plan.deadlines)):
        try:
            rs = cluster.get("apps/v1", "ReplicaSet", name, namespace)
        except NotFound:
            continue
        replicas = plan.scales.get(name)
        notes = {}
        if name in plan.deadlines:
            notes[SCALE_DOWN_DEADLINE_ANNOTATION] = plan.deadlines[name]
        current = (rs.get("spec") or {}).get("replicas")
        present = (rs["metadata"].get("annotations") or {}).get(SCALE_DOWN_DEADLINE_ANNOTATION)
        if (replicas is None or replicas == current) and all(present == v for v in notes.values()):
            continue
        write_replica_set(cluster, rs, replicas=replicas, annotations=notes)


def _services(cluster: Cluster, clock: Clock, ro: Obj, plan: Plan) -> None:
    namespace = ro["metadata"].get("namespace") or "default"
    for service, pod_hash in plan.service_selectors.items():
        try:
            svc = cluster.get("v1", "Service", service, namespace)
        except NotFound:
            note(
                cluster,
                clock,
                ro,
                "ServiceNotFound",
                f"Service '{service}' not found",
                warning=True,
            )
            continue
        selector = (svc.get("spec") or {}).get("selector") or {}
        if selector.get(HASH_LABEL) == pod_hash:
            continue
        # A Service's selector is one atomic value (`+mapType=atomic`): write all of it, the
        # app's keys plus the hash, or the apply would leave only the hash (and the app's
        # diff would then see its keys gone and fight the Rollout over the selector).
        body = {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": service, "namespace": namespace},
            "spec": {"selector": {**selector, HASH_LABEL: pod_hash}},
        }
        cluster.apply(body, field_manager=FIELD_MANAGER, force=True)
        note(
            cluster,
            clock,
            ro,
            "SwitchService",
            f"Switched selector for service '{service}' "
            f"from '{(svc.get('spec') or {}).get('selector', {}).get(HASH_LABEL, '')}' "
            f"to '{pod_hash}'",
        )


def _traffic(router: TrafficRoutingReconciler, traffic: TrafficDecision) -> bool | None:
    extra = traffic.additional
    router.update_hash(traffic.canary_hash, traffic.stable_hash, extra)  # subsets first
    router.set_weight(traffic.canary_weight, extra)
    if traffic.remove_managed_routes:
        router.remove_managed_routes()
    for route in traffic.header_routes:
        router.set_header_route(route)
    for mirror in traffic.mirror_routes:
        router.set_mirror_route(mirror)
    return router.verify_weight(traffic.canary_weight, extra)


def note(
    cluster: Cluster, clock: Clock, ro: Obj, reason: str, message: str, *, warning: bool = False
) -> None:
    with contextlib.suppress(ClusterError):
        record_event(
            cluster,
            clock,
            involved=ro,
            reason=reason,
            message=message,
            event_type="Warning" if warning else "Normal",
            component="headway-rollouts-controller",
        )


def _experiments(cluster: Cluster, namespace: str, plan: Plan) -> None:
    for body in plan.create_experiments:
        cluster.apply(body, field_manager=FIELD_MANAGER)
    for name in plan.terminate_experiments:
        body = {"apiVersion": ARGO_API, "kind": "Experiment",
                "metadata": {"name": name, "namespace": namespace},
                "spec": {"terminate": True}}
        with contextlib.suppress(NotFound):
            cluster.apply(body, field_manager=TERMINATOR, force=True)


def execute_plan(
    cluster: Cluster, clock: Clock, ro: Obj, plan: Plan, router: TrafficRoutingReconciler | None
) -> dict[str, Any]:
    """Do everything but the status write; returns the status to write."""
    namespace = ro["metadata"].get("namespace") or "default"
    _create_runs(cluster, plan)
    _supersede_runs(cluster, namespace, plan)
    sync_role_metadata(cluster, namespace, plan.pod_metadata)
    _experiments(cluster, namespace, plan)
    _replica_sets(cluster, namespace, plan)
    if plan.workload_replicas is not None:
        scale_workload(cluster, ro, plan.workload_replicas)
    _services(cluster, clock, ro, plan)
    for pod in plan.delete_pods:
        with contextlib.suppress(NotFound):
            cluster.delete("v1", "Pod", pod, namespace)
    for rs in plan.delete_replica_sets:
        with contextlib.suppress(NotFound):
            cluster.delete("apps/v1", "ReplicaSet", rs, namespace)
    for run in plan.delete_runs:
        with contextlib.suppress(NotFound):
            cluster.delete(ARGO_API, "AnalysisRun", run, namespace)
    status = plan.status
    if plan.traffic is not None and router is not None:
        verified = _traffic(router, plan.traffic)
        weights = (status.get("canary") or {}).get("weights")
        if weights is not None and verified is not None:
            weights["verified"] = verified
    return status


def record_events(cluster: Cluster, clock: Clock, ro: Obj, plan: Plan) -> None:
    for event_type, reason, message in plan.events:
        note(cluster, clock, ro, reason, message, warning=event_type == "Warning")
