"""The Deployment controller: ReplicaSets per pod-template hash, RollingUpdate and Recreate.

One step per call, as Kubernetes' controller does it:

1. Find the Deployment's ReplicaSets (controller ownerReference) and the new one: its
   `pod-template-hash` label equals the hash of `spec.template` (`pod_template_hash`).
   None yet -> create `<deployment>-<hash>` with revision = highest revision + 1.
2. RollingUpdate: scale the new ReplicaSet up within maxSurge; if it did not change, scale
   old ones down within maxUnavailable (`deployment_math`). Recreate: old ReplicaSets to 0,
   wait until their pods are gone, then the new one to `replicas`.
3. Write status: counters, observedGeneration, conditions `Progressing` (NewReplicaSetCreated,
   ReplicaSetUpdated, NewReplicaSetAvailable, ProgressDeadlineExceeded after
   `progressDeadlineSeconds`, default 600) and `Available` (MinimumReplicasAvailable).
4. Delete old ReplicaSets scaled to zero beyond `revisionHistoryLimit` (default 10).
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Mapping
from typing import Any

from headway.clock import Clock
from headway.cluster.errors import NotFound
from headway.cluster.local.workloads import deployment_conditions as dc
from headway.cluster.local.workloads import deployment_math as dm
from headway.cluster.local.workloads.recorder import note, reconcile_each
from headway.cluster.local.workloads.replicasets import owner_reference, pods_of
from headway.cluster.protocol import Cluster
from headway.kube.pod_facts import is_active, owned_by
from headway.kube.pod_template import pod_template_hash
from headway.model.obj import Obj
from headway.model.owned_replica_set import owned_replica_set

__all__ = ["FIELD_MANAGER", "REVISION_ANNOTATION", "reconcile_deployment", "sync_deployments"]

FIELD_MANAGER = "headway-deployment-controller"
REVISION_ANNOTATION = "deployment.kubernetes.io/revision"
HASH_LABEL = "pod-template-hash"


def _replicas(obj: Mapping[str, Any], part: str = "spec") -> int:
    return int((obj.get(part) or {}).get("replicas", 1 if part == "spec" else 0) or 0)


def _revision(rs: Mapping[str, Any]) -> int:
    raw = ((rs.get("metadata") or {}).get("annotations") or {}).get(REVISION_ANNOTATION, "0")
    return int(raw) if str(raw).isdigit() else 0


def _counts(rs: Obj) -> dm.ReplicaSetCounts:
    meta = rs["metadata"]
    return dm.ReplicaSetCounts(
        name=str(meta["name"]),
        replicas=_replicas(rs),
        available=int((rs.get("status") or {}).get("availableReplicas") or 0),
        order=(str(meta.get("creationTimestamp") or ""), str(meta["name"])),
    )


def _write_replica_set(
    cluster: Cluster, rs: Obj, *, replicas: int, revision: int | None = None
) -> Obj:
    """Apply the ReplicaSet as this controller owns it, with a new replica count."""
    meta = rs["metadata"]
    body_meta = {
        k: copy.deepcopy(meta[k])
        for k in ("name", "namespace", "labels", "annotations", "ownerReferences")
        if meta.get(k)
    }
    if revision is not None:
        body_meta.setdefault("annotations", {})[REVISION_ANNOTATION] = str(revision)
    spec = copy.deepcopy(rs.get("spec") or {})
    spec["replicas"] = replicas
    body = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": body_meta, "spec": spec}
    return cluster.apply(body, field_manager=FIELD_MANAGER, force=True)


def _new_replica_set(d: Obj, template_hash: str, *, replicas: int, revision: int) -> Obj:
    return owned_replica_set(
        d,
        hash_label=HASH_LABEL,
        pod_hash=template_hash,
        replicas=replicas,
        annotations={
            REVISION_ANNOTATION: str(revision),
            "deployment.kubernetes.io/desired-replicas": str(_replicas(d)),
        },
        owner_reference=owner_reference(d),
    )


def _owned_sets(cluster: Cluster, d: Obj) -> list[Obj]:
    namespace = d["metadata"].get("namespace") or "default"
    uid = str(d["metadata"]["uid"])
    return [
        rs for rs in cluster.list("apps/v1", "ReplicaSet", namespace=namespace) if owned_by(rs, uid)
    ]


def _create_new_set(
    cluster: Cluster, clock: Clock, d: Obj, *, template_hash: str, olds: list[Obj], posts: Any
) -> Obj:
    """The first ReplicaSet of a new template: revision = highest + 1, sized by strategy."""
    desired = _replicas(d)
    if ((d.get("spec") or {}).get("strategy") or {}).get("type") == "Recreate":
        start = 0 if olds else desired  # the first version starts at once
    else:
        start = dm.new_replica_set_scale(
            desired=desired,
            max_surge=posts.max_surge,
            total=sum(_replicas(rs) for rs in olds),
            new_replicas=0,
        )
    revision = max((_revision(rs) for rs in olds), default=0) + 1
    new = cluster.apply(
        _new_replica_set(d, template_hash, replicas=start, revision=revision),
        field_manager=FIELD_MANAGER,
        force=True,
    )
    note(
        cluster,
        clock,
        d,
        "ScalingReplicaSet",
        f"Scaled up replica set {new['metadata']['name']} from 0 to {start}",
    )
    return new


def reconcile_deployment(cluster: Cluster, clock: Clock, d: Obj) -> float | None:
    """One step for one Deployment; returns seconds until it wants another look, or None."""
    if d["metadata"].get("deletionTimestamp"):
        return None
    spec = d.get("spec") or {}
    posts = dm.deployment_fenceposts(spec.get("strategy") or {}, _replicas(d))
    sets = _owned_sets(cluster, d)
    template_hash = pod_template_hash(
        spec.get("template") or {}, int((d.get("status") or {}).get("collisionCount") or 0)
    )
    new = next(
        (
            rs
            for rs in sets
            if (rs["metadata"].get("labels") or {}).get(HASH_LABEL) == template_hash
        ),
        None,
    )
    olds = [rs for rs in sets if rs is not new]
    top = max((_revision(rs) for rs in olds), default=0)
    created = new is None
    if new is None and spec.get("paused"):
        return None  # a paused Deployment starts no new revision
    if new is None:
        new = _create_new_set(
            cluster, clock, d, template_hash=template_hash, olds=olds, posts=posts
        )
    elif _revision(new) <= top:  # back to an older template: it becomes the newest revision
        new = _write_replica_set(cluster, new, replicas=_replicas(new), revision=top + 1)
    elif not spec.get("paused"):
        if (spec.get("strategy") or {}).get("type") == "Recreate":
            _recreate_step(cluster, clock, d, new, olds)
        else:
            _rolling_step(cluster, clock, d, new=new, olds=olds, posts=posts)
    _cleanup_history(cluster, d, olds)
    fresh = _owned_sets(cluster, d)
    new_now = next((rs for rs in fresh if rs["metadata"]["uid"] == new["metadata"]["uid"]), new)
    return _write_status(cluster, clock, d, fresh, new_now, created=created, posts=posts)


def _scale(cluster: Cluster, clock: Clock, d: Obj, rs: Obj, replicas: int) -> None:
    before = _replicas(rs)
    _write_replica_set(cluster, rs, replicas=replicas)
    direction = "up" if replicas > before else "down"
    note(
        cluster,
        clock,
        d,
        "ScalingReplicaSet",
        f"Scaled {direction} replica set {rs['metadata']['name']} from {before} to {replicas}",
    )


def _rolling_step(
    cluster: Cluster, clock: Clock, d: Obj, *, new: Obj, olds: list[Obj], posts: Any
) -> None:
    desired = _replicas(d)
    total = _replicas(new) + sum(_replicas(rs) for rs in olds)
    target = dm.new_replica_set_scale(
        desired=desired, max_surge=posts.max_surge, total=total, new_replicas=_replicas(new)
    )
    if target != _replicas(new):
        _scale(cluster, clock, d, new, target)
        return
    by_name = {rs["metadata"]["name"]: rs for rs in olds}
    cuts = dm.old_replica_sets_scale_down(
        desired=desired,
        max_unavailable=posts.max_unavailable,
        new=_counts(new),
        olds=[_counts(rs) for rs in olds],
    )
    for name, replicas in cuts.items():
        _scale(cluster, clock, d, by_name[name], replicas)


def _recreate_step(cluster: Cluster, clock: Clock, d: Obj, new: Obj, olds: list[Obj]) -> None:
    desired = _replicas(d)
    running = [rs for rs in olds if _replicas(rs) > 0]
    for rs in running:
        _scale(cluster, clock, d, rs, 0)
    if running or any(
        is_active(p) or p["metadata"].get("deletionTimestamp")
        for rs in olds
        for p in pods_of(cluster, rs)
    ):
        return  # old pods still exist: Recreate never runs old and new together
    if _replicas(new) != desired:
        _scale(cluster, clock, d, new, desired)


def _cleanup_history(cluster: Cluster, d: Obj, olds: list[Obj]) -> None:
    limit = int((d.get("spec") or {}).get("revisionHistoryLimit", 10))
    idle = sorted(
        (rs for rs in olds if _replicas(rs) == 0 and _replicas(rs, "status") == 0), key=_revision
    )
    for rs in idle[: max(0, len(idle) - limit)]:
        with contextlib.suppress(NotFound):
            cluster.delete(
                "apps/v1", "ReplicaSet", rs["metadata"]["name"], rs["metadata"].get("namespace")
            )


def _write_status(
    cluster: Cluster, clock: Clock, d: Obj, sets: list[Obj], new: Obj, *, created: bool, posts: Any
) -> float | None:
    desired, before, now = _replicas(d), d.get("status") or {}, clock.now()
    counts = dm.deployment_counts(all_sets=sets, new=new)
    conds = {c.get("type"): c for c in before.get("conditions") or []}
    progressing, requeue = dc.progressing_condition(
        old=conds.get("Progressing"),
        created=created,
        complete=dm.rollout_complete(counts, desired),
        progressed=dm.made_progress(dc.counts_of(before), counts),
        replica_set=str(new["metadata"]["name"]),
        now=now,
        deadline_seconds=float((d.get("spec") or {}).get("progressDeadlineSeconds", 600)),
    )
    available = dc.available_condition(
        old=conds.get("Available"), ok=counts.available >= desired - posts.max_unavailable, now=now
    )
    status: dict[str, Any] = {
        "observedGeneration": d["metadata"].get("generation", 1),
        "replicas": counts.replicas,
        "updatedReplicas": counts.updated,
        "readyReplicas": counts.ready,
        "availableReplicas": counts.available,
        "unavailableReplicas": counts.unavailable,
        "conditions": [available, progressing],
    }
    if before.get("collisionCount"):
        status["collisionCount"] = before["collisionCount"]
    if status != before:
        meta = d["metadata"]
        cluster.patch_status("apps/v1", "Deployment", meta["name"], meta.get("namespace"), status)
    return requeue


def sync_deployments(cluster: Cluster, clock: Clock) -> float | None:
    return reconcile_each(
        cluster,
        clock,
        cluster.list("apps/v1", "Deployment"),
        lambda d: reconcile_deployment(cluster, clock, d),
    )
