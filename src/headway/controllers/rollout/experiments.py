"""The Experiment controller: one step per call, decisions in `headway.rollout.experiments`.

It watches Experiments, and the ReplicaSets and AnalysisRuns they control (mapped back to
their Experiment), so a pod becoming available or a run finishing wakes the experiment.
Names are deterministic and every write idempotent: killed at any point, it resumes.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence

from headway.clock import Clock
from headway.cluster.errors import NotFound
from headway.cluster.protocol import Cluster
from headway.controllers.manager import ObjectKey
from headway.controllers.rollout.inputs import (
    ARGO_API,
    FIELD_MANAGER,
    owned_by,
    write_replica_set,
)
from headway.model.obj import Obj
from headway.rollout.experiment_services import claimed_services
from headway.rollout.experiments import ExperimentPlan, decide_experiment
from headway.rollout.replica_sets import SCALE_DOWN_DEADLINE_ANNOTATION, view_of
from headway.rollout.runs import run_view_of

__all__ = ["ExperimentController"]


class ExperimentController:
    name = "experiments"
    watches: Sequence[tuple[str, str]] = (
        (ARGO_API, "Experiment"),
        ("apps/v1", "ReplicaSet"),
        (ARGO_API, "AnalysisRun"),
    )

    def __init__(self, cluster: Cluster, clock: Clock) -> None:
        self._cluster = cluster
        self._clock = clock

    def keys_for(self, obj: Obj) -> Iterable[ObjectKey]:
        meta = obj.get("metadata") or {}
        namespace = str(meta.get("namespace") or "default")
        if obj.get("kind") == "Experiment":
            return [ObjectKey(namespace, str(meta.get("name")))]
        return [ObjectKey(namespace, str(r["name"])) for r in meta.get("ownerReferences") or []
                if r.get("kind") == "Experiment" and r.get("controller")]

    def step(self, key: ObjectKey) -> float | None:
        try:
            exp = self._cluster.get(ARGO_API, "Experiment", key.name, key.namespace)
        except NotFound:
            return None
        if exp["metadata"].get("deletionTimestamp"):
            return None
        uid = str(exp["metadata"].get("uid"))
        sets = [rs for rs in self._cluster.list("apps/v1", "ReplicaSet", namespace=key.namespace)
                if owned_by(rs, uid)]
        runs = [r for r in self._cluster.list(ARGO_API, "AnalysisRun", namespace=key.namespace)
                if owned_by(r, uid)]
        services, taken = self._services(exp, key.namespace, uid)
        try:
            plan = decide_experiment(
                exp, sets={rs["metadata"]["name"]: view_of(rs) for rs in sets},
                runs={r["metadata"]["name"]: run_view_of(r) for r in runs},
                analysis_templates=self._templates(exp), now=self._clock.now(),
                services=services, taken=taken)
        except ValueError as err:  # a duration that does not parse, say
            plan = ExperimentPlan(status={**(exp.get("status") or {}), "phase": "Error",
                                          "message": f"Experiment {key.name}: {err}"})
        self._execute(exp, plan)
        return plan.requeue_after

    def _services(
        self, exp: Obj, namespace: str, uid: str
    ) -> tuple[dict[str, str], frozenset[str]]:
        """template -> the Service it claimed, and the names of every other Service."""
        templates = (exp.get("spec") or {}).get("templates") or []
        if not any(t.get("service") is not None for t in templates):
            return {}, frozenset()  # the common case: no Service to look for
        every = self._cluster.list("v1", "Service", namespace=namespace)
        claimed = claimed_services(exp, [s for s in every if owned_by(s, uid)])
        mine = set(claimed.values())
        return claimed, frozenset(str(s["metadata"]["name"]) for s in every
                                  if s["metadata"]["name"] not in mine)

    def _templates(self, exp: Obj) -> dict[tuple[str, str], Obj]:
        namespace = exp["metadata"].get("namespace") or "default"
        found: dict[tuple[str, str], Obj] = {}
        for analysis in (exp.get("spec") or {}).get("analyses") or []:
            kind = "ClusterAnalysisTemplate" if analysis.get("clusterScope") else "AnalysisTemplate"
            name = str(analysis.get("templateName"))
            with contextlib.suppress(NotFound):
                found[(kind, name)] = self._cluster.get(
                    ARGO_API, kind, name, None if analysis.get("clusterScope") else namespace)
        return found

    def _execute(self, exp: Obj, plan: ExperimentPlan) -> None:
        namespace = exp["metadata"].get("namespace") or "default"
        for body in plan.create_sets:
            self._cluster.apply(body, field_manager=FIELD_MANAGER)
        for name, replicas in plan.scales.items():
            with contextlib.suppress(NotFound):
                rs = self._cluster.get("apps/v1", "ReplicaSet", name, namespace)
                if (rs.get("spec") or {}).get("replicas") != replicas:
                    write_replica_set(self._cluster, rs, replicas=replicas)
        for name, deadline in plan.deadlines.items():
            with contextlib.suppress(NotFound):
                rs = self._cluster.get("apps/v1", "ReplicaSet", name, namespace)
                write_replica_set(self._cluster, rs,
                                  annotations={SCALE_DOWN_DEADLINE_ANNOTATION: deadline})
        for service in plan.create_services:
            self._cluster.apply(service, field_manager=FIELD_MANAGER)
        for name in plan.delete_services:
            with contextlib.suppress(NotFound):
                self._cluster.delete("v1", "Service", name, namespace)
        for run in plan.create_runs:
            self._cluster.apply(run, field_manager=FIELD_MANAGER)
        for name in plan.terminate_runs:
            body = {"apiVersion": ARGO_API, "kind": "AnalysisRun",
                    "metadata": {"name": name, "namespace": namespace},
                    "spec": {"terminate": True}}
            self._cluster.apply(body, field_manager=FIELD_MANAGER, force=True)
        if plan.status != (exp.get("status") or {}):
            self._cluster.patch_status(ARGO_API, "Experiment", exp["metadata"]["name"], namespace,
                                       plan.status,
                                       resource_version=exp["metadata"].get("resourceVersion"))
