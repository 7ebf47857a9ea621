"""Reading what one Rollout reconcile needs from the cluster, and building its context.

The ReplicaSet for the current template is made to exist here, before deciding (Argo's
`getAllReplicaSetsAndSyncRevision`): created at zero replicas with the next revision, or,
when an older ReplicaSet already has the template's hash (an undo or a fast-track rollback),
given the next revision.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from headway.clock import Clock
from headway.cluster.errors import Invalid, NotFound
from headway.cluster.protocol import Cluster
from headway.kube.pod_template import pod_template_hash
from headway.kubetime import parse_time
from headway.model.obj import Obj
from headway.model.rollout import Rollout, parse_rollout
from headway.model.rollout_steps import AnalysisTemplateRef
from headway.model.yamlload import Document
from headway.rollout.analysis_runs import template_key
from headway.rollout.anti_affinity import injected_stable_hash, with_anti_affinity
from headway.rollout.context import RolloutContext
from headway.rollout.experiment_step import experiment_view_of
from headway.rollout.replica_sets import (
    REVISION_ANNOTATION,
    desired_replica_set,
    next_revision,
    sort_replica_sets,
    view_of,
)
from headway.rollout.restart import PodView
from headway.rollout.runs import run_view_of

__all__ = [
    "ARGO_API",
    "FIELD_MANAGER",
    "build_context",
    "owned_by",
    "owned_runs",
    "parse_rollout_object",
    "write_replica_set",
]

ARGO_API = "argoproj.io/v1alpha1"
FIELD_MANAGER = "headway-rollouts-controller"


def owned_by(obj: Mapping[str, Any], uid: str) -> bool:
    refs = (obj.get("metadata") or {}).get("ownerReferences") or []
    return any(r.get("uid") == uid and r.get("controller") for r in refs)


def parse_rollout_object(obj: Obj) -> tuple[Rollout | None, str]:
    """The typed Rollout, or None and the first problem, phrased as `field: message`."""
    meta = obj.get("metadata") or {}
    document = Document(
        obj=obj, file=f"Rollout {meta.get('namespace')}/{meta.get('name')}", index=0, line=0
    )
    rollout, diagnostics = parse_rollout(document)
    errors = [d for d in diagnostics if d.severity.name == "ERROR"]
    if rollout is None or errors:
        first = errors[0] if errors else None
        return None, f"{first.field}: {first.message}" if first else "the Rollout is not valid"
    return rollout, ""


def write_replica_set(
    cluster: Cluster,
    rs: Obj,
    *,
    replicas: int | None = None,
    annotations: Mapping[str, str | None] | None = None,
) -> Obj:
    """Apply the ReplicaSet whole, as this controller owns it, with changes."""
    meta = rs["metadata"]
    body_meta = {
        k: copy.deepcopy(meta[k])
        for k in ("name", "namespace", "labels", "annotations", "ownerReferences")
        if meta.get(k)
    }
    notes = dict(body_meta.get("annotations") or {})
    for key, value in (annotations or {}).items():
        if value is None:
            notes.pop(key, None)
        else:
            notes[key] = value
    body_meta["annotations"] = notes
    spec = copy.deepcopy(rs.get("spec") or {})
    if replicas is not None:
        spec["replicas"] = replicas
    body = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": body_meta, "spec": spec}
    return cluster.apply(body, field_manager=FIELD_MANAGER, force=True)


def _owned(cluster: Cluster, api_version: str, kind: str, ro: Obj) -> list[Obj]:
    namespace = ro["metadata"].get("namespace") or "default"
    uid = str(ro["metadata"].get("uid"))
    return [o for o in cluster.list(api_version, kind, namespace=namespace) if owned_by(o, uid)]


def owned_runs(cluster: Cluster, ro: Mapping[str, Any]) -> list[Obj]:
    """The AnalysisRuns this Rollout controls."""
    namespace = ro["metadata"].get("namespace") or "default"
    uid = str(ro["metadata"].get("uid"))
    runs = cluster.list(ARGO_API, "AnalysisRun", namespace=namespace)
    return [r for r in runs if owned_by(r, uid)]


def _anti_affinity_block(ro: Obj) -> Mapping[str, Any] | None:
    strategy = (ro.get("spec") or {}).get("strategy") or {}
    block = (strategy.get("canary") or strategy.get("blueGreen") or {}).get("antiAffinity")
    return block if isinstance(block, Mapping) else None


def _anti_affinity_spec(ro: Obj, rs: Obj, pod_hash: str) -> dict[str, Any]:
    """The ReplicaSet's pod spec with the stable-avoiding term `antiAffinity` asks for."""
    return with_anti_affinity(
        ((rs.get("spec") or {}).get("template") or {}).get("spec") or {},
        _anti_affinity_block(ro),
        stable_hash=str((ro.get("status") or {}).get("stableRS") or ""),
        current_hash=pod_hash,
        namespace=str(ro["metadata"].get("namespace") or "default"),
    )


def _stale_anti_affinity(ro: Obj, rs: Obj, pod_hash: str) -> bool:
    """The term written earlier names a ReplicaSet that is stable no more (Argo rewrites it
    while the new ReplicaSet is not the stable one)."""
    block = _anti_affinity_block(ro)
    stable = str((ro.get("status") or {}).get("stableRS") or "")
    if block is None or not stable or stable == pod_hash:
        return False
    pod_spec = ((rs.get("spec") or {}).get("template") or {}).get("spec") or {}
    named = injected_stable_hash(pod_spec, block)
    return bool(named) and named != stable


def _ensure_current_replica_set(cluster: Cluster, ro: Obj, pod_hash: str) -> list[Obj]:
    sets = _owned(cluster, "apps/v1", "ReplicaSet", ro)
    views = [view_of(rs) for rs in sets]
    current = next((rs for rs in sets if view_of(rs).pod_hash == pod_hash), None)
    if current is None:
        body = desired_replica_set(ro, pod_hash=pod_hash, revision=next_revision(views), replicas=0)
        body["spec"]["template"]["spec"] = _anti_affinity_spec(ro, body, pod_hash)
        sets.append(cluster.apply(body, field_manager=FIELD_MANAGER))
        return sets
    if _stale_anti_affinity(ro, current, pod_hash):
        changed = copy.deepcopy(current)
        changed["spec"]["template"]["spec"] = _anti_affinity_spec(ro, current, pod_hash)
        current = write_replica_set(cluster, changed)
        sets = [current if view_of(s).pod_hash == pod_hash else s for s in sets]
    if view_of(current).revision < max(v.revision for v in views):
        revision = str(next_revision(views))
        current = write_replica_set(cluster, current, annotations={REVISION_ANNOTATION: revision})
        sets = [current if view_of(s).pod_hash == pod_hash else s for s in sets]
    return sets


def _template_refs(ro: Rollout) -> Iterable[AnalysisTemplateRef]:
    strategy = ro.spec.strategy
    analyses: list[Any] = []
    if strategy.canary is not None:
        analyses += [s.analysis for s in strategy.canary.steps] + [strategy.canary.analysis]
    if strategy.blue_green is not None:
        bg = strategy.blue_green
        analyses += [bg.pre_promotion_analysis, bg.post_promotion_analysis]
    for analysis in analyses:
        yield from analysis.templates if analysis is not None else ()


def _templates(cluster: Cluster, ro: Rollout, namespace: str) -> dict[tuple[str, str], Obj]:
    found: dict[tuple[str, str], Obj] = {}
    for ref in _template_refs(ro):
        kind, name = template_key(ref)
        try:
            scope = None if ref.cluster_scope else namespace
            found[(kind, name)] = cluster.get(ARGO_API, kind, name, scope)
        except NotFound:
            continue
    return found


def _pods(cluster: Cluster, obj: Obj, sets: list[Obj]) -> tuple[PodView, ...]:
    if not (obj.get("spec") or {}).get("restartAt"):
        return ()
    uids = {str(rs["metadata"].get("uid")) for rs in sets}
    namespace = obj["metadata"].get("namespace") or "default"
    return tuple(
        PodView(str(p["metadata"]["name"]), parse_time(p["metadata"].get("creationTimestamp")))
        for p in cluster.list("v1", "Pod", namespace=namespace)
        if any(owned_by(p, uid) for uid in uids) and not p["metadata"].get("deletionTimestamp")
    )


_MAX_COLLISIONS = 10


def _collision_free_hash(cluster: Cluster, obj: Obj) -> tuple[str, int]:
    """The pod hash of the template and the collision count it takes (Argo's collisionCount).

    A ReplicaSet named `<rollout>-<hash>` that this Rollout does not control is someone
    else's: typically the Deployment of the same name a `workloadRef` migrates from, whose
    identical template hashes the same. The count goes up until the name is free or ours."""
    template = (obj.get("spec") or {}).get("template") or {}
    collisions = int((obj.get("status") or {}).get("collisionCount") or 0)
    namespace = obj["metadata"].get("namespace") or "default"
    uid = str(obj["metadata"].get("uid"))
    for _ in range(_MAX_COLLISIONS):
        pod_hash = pod_template_hash(template, collisions)
        try:
            found = cluster.get("apps/v1", "ReplicaSet", f"{obj['metadata']['name']}-{pod_hash}",
                                namespace)
        except NotFound:
            return pod_hash, collisions
        if owned_by(found, uid):
            return pod_hash, collisions
        collisions += 1
    raise Invalid(f"Rollout {obj['metadata']['name']}: {_MAX_COLLISIONS} ReplicaSet names of its "
                  "template are taken by objects it does not control")


def build_context(cluster: Cluster, clock: Clock, obj: Obj, rollout: Rollout) -> RolloutContext:
    pod_hash, collisions = _collision_free_hash(cluster, obj)
    if collisions != int((obj.get("status") or {}).get("collisionCount") or 0):
        obj = {**obj, "status": {**(obj.get("status") or {}), "collisionCount": collisions}}
    sets = _ensure_current_replica_set(cluster, obj, pod_hash)
    stable = str((obj.get("status") or {}).get("stableRS") or "")
    namespace = obj["metadata"].get("namespace") or "default"
    return RolloutContext(
        obj=obj,
        rollout=rollout,
        current_hash=pod_hash,
        sets=sort_replica_sets(
            [view_of(rs) for rs in sets], current_hash=pod_hash, stable_hash=stable
        ),
        runs=tuple(run_view_of(r) for r in owned_runs(cluster, obj)),
        templates=_templates(cluster, rollout, namespace),
        now=clock.now(),
        pods=_pods(cluster, obj, sets),
        experiments=tuple(experiment_view_of(e) for e in owned_experiments(cluster, obj)),
        replica_set_templates={
            view_of(rs).pod_hash: {"template": (rs.get("spec") or {}).get("template") or {},
                                   "selector": (rs.get("spec") or {}).get("selector") or {}}
            for rs in sets
        },
    )


def owned_experiments(cluster: Cluster, ro: Mapping[str, Any]) -> list[Obj]:
    """The Experiments this Rollout controls (its experiment steps')."""
    namespace = ro["metadata"].get("namespace") or "default"
    uid = str(ro["metadata"].get("uid"))
    found = cluster.list(ARGO_API, "Experiment", namespace=namespace)
    return [e for e in found if owned_by(e, uid)]
