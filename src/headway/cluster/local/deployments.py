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
from headway.cluster.local import deployment_math as dm
from headway.cluster.local.pod_facts import format_time, is_active, owned_by, parse_time
from headway.cluster.local.recorder import note, reconcile_each
from headway.cluster.local.replicasets import owner_reference, pods_of
from headway.cluster.protocol import Cluster, Obj

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
    meta, spec = d["metadata"], d.get("spec") or {}
    template = copy.deepcopy(spec.get("template") or {})
    tmeta = template.setdefault("metadata", {})
    labels = {**(tmeta.get("labels") or {}), HASH_LABEL: template_hash}
    tmeta["labels"] = labels
    selector = copy.deepcopy(spec.get("selector") or {})
    selector["matchLabels"] = {**(selector.get("matchLabels") or {}), HASH_LABEL: template_hash}
    rs_spec: dict[str, Any] = {"replicas": replicas, "selector": selector, "template": template}
    if spec.get("minReadySeconds"):
        rs_spec["minReadySeconds"] = spec["minReadySeconds"]
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": f"{meta['name']}-{template_hash}",
            "namespace": meta.get("namespace") or "default",
            "labels": labels,
            "annotations": {
                REVISION_ANNOTATION: str(revision),
                "deployment.kubernetes.io/desired-replicas": str(_replicas(d)),
            },
            "ownerReferences": [owner_reference(d)],
        },
        "spec": rs_spec,
    }


def reconcile_deployment(cluster: Cluster, clock: Clock, d: Obj) -> float | None:
    """One step for one Deployment; returns seconds until it wants another look, or None."""
    if d["metadata"].get("deletionTimestamp"):
        return None
    spec = d.get("spec") or {}
    namespace = d["metadata"].get("namespace") or "default"
    desired = _replicas(d)
    strategy = spec.get("strategy") or {}
    posts = dm.deployment_fenceposts(strategy, desired)
    sets = [
        rs
        for rs in cluster.list("apps/v1", "ReplicaSet", namespace=namespace)
        if owned_by(rs, str(d["metadata"]["uid"]))
    ]
    template_hash = dm.pod_template_hash(
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
    created = False
    if new is None and spec.get("paused"):
        return None  # a paused Deployment starts no new revision
    if new is None:
        old_total = sum(_replicas(rs) for rs in olds)
        start = (
            (0 if olds else desired)  # Recreate: the first version starts at once
            if strategy.get("type") == "Recreate"
            else dm.new_replica_set_scale(
                desired=desired, max_surge=posts.max_surge, total=old_total, new_replicas=0
            )
        )
        new = cluster.apply(
            _new_replica_set(d, template_hash, replicas=start, revision=top + 1),
            field_manager=FIELD_MANAGER,
            force=True,
        )
        created = True
        note(
            cluster,
            clock,
            d,
            "ScalingReplicaSet",
            f"Scaled up replica set {new['metadata']['name']} from 0 to {start}",
        )
    elif _revision(new) <= top:
        new = _write_replica_set(cluster, new, replicas=_replicas(new), revision=top + 1)
    elif not spec.get("paused"):
        if strategy.get("type") == "Recreate":
            _recreate_step(cluster, clock, d, new, olds)
        else:
            _rolling_step(cluster, clock, d, new=new, olds=olds, posts=posts)
    _cleanup_history(cluster, d, olds)
    fresh = [
        rs
        for rs in cluster.list("apps/v1", "ReplicaSet", namespace=namespace)
        if owned_by(rs, str(d["metadata"]["uid"]))
    ]
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


def _progressing(
    old: Mapping[str, Any] | None,
    *,
    status: str,
    reason: str,
    message: str,
    stamp: str,
    touch: bool,
) -> dict[str, Any]:
    same = old is not None and old.get("status") == status
    keep_update = same and old is not None and old.get("reason") == reason and not touch
    return {
        "type": "Progressing",
        "status": status,
        "reason": reason,
        "message": message,
        "lastUpdateTime": old.get("lastUpdateTime", stamp) if keep_update and old else stamp,
        "lastTransitionTime": old.get("lastTransitionTime", stamp) if same and old else stamp,
    }


def _write_status(
    cluster: Cluster, clock: Clock, d: Obj, sets: list[Obj], new: Obj, *, created: bool, posts: Any
) -> float | None:
    desired = _replicas(d)
    before = d.get("status") or {}
    counts = dm.deployment_counts(all_sets=sets, new=new)
    old_counts = dm.DeploymentCounts(
        replicas=int(before.get("replicas") or 0),
        updated=int(before.get("updatedReplicas") or 0),
        ready=int(before.get("readyReplicas") or 0),
        available=int(before.get("availableReplicas") or 0),
        unavailable=int(before.get("unavailableReplicas") or 0),
    )
    now, name = clock.now(), new["metadata"]["name"]
    stamp = format_time(now)
    conds = {c.get("type"): c for c in before.get("conditions") or []}
    old_prog = conds.get("Progressing")
    deadline = float((d.get("spec") or {}).get("progressDeadlineSeconds", 600))
    requeue: float | None = None
    if created:
        prog = _progressing(
            old_prog,
            status="True",
            reason="NewReplicaSetCreated",
            message=f'Created new replica set "{name}"',
            stamp=stamp,
            touch=True,
        )
    elif dm.rollout_complete(counts, desired):
        prog = _progressing(
            old_prog,
            status="True",
            reason="NewReplicaSetAvailable",
            message=f'ReplicaSet "{name}" has successfully progressed.',
            stamp=stamp,
            touch=False,
        )
    elif (
        dm.made_progress(old_counts, counts)
        or old_prog is None
        or (old_prog.get("reason") == "NewReplicaSetAvailable")
    ):
        prog = _progressing(
            old_prog,
            status="True",
            reason="ReplicaSetUpdated",
            message=f'ReplicaSet "{name}" is progressing.',
            stamp=stamp,
            touch=True,
        )
        requeue = deadline
    else:
        since = parse_time(old_prog.get("lastUpdateTime")) or now
        left = deadline - (now - since).total_seconds()
        if left <= 0 or old_prog.get("reason") == "ProgressDeadlineExceeded":
            prog = _progressing(
                old_prog,
                status="False",
                reason="ProgressDeadlineExceeded",
                message=f'ReplicaSet "{name}" has timed out progressing.',
                stamp=stamp,
                touch=False,
            )
        else:
            prog, requeue = dict(old_prog), left
    ok = counts.available >= desired - posts.max_unavailable
    avail_old = conds.get("Available")
    avail = {
        "type": "Available",
        "status": "True" if ok else "False",
        "reason": "MinimumReplicasAvailable" if ok else "MinimumReplicasUnavailable",
        "message": "Deployment has minimum availability."
        if ok
        else "Deployment does not have minimum availability.",
        "lastUpdateTime": stamp,
        "lastTransitionTime": stamp,
    }
    if avail_old is not None and avail_old.get("status") == avail["status"]:
        avail["lastUpdateTime"] = avail_old.get("lastUpdateTime", stamp)
        avail["lastTransitionTime"] = avail_old.get("lastTransitionTime", stamp)
    status: dict[str, Any] = {
        "observedGeneration": d["metadata"].get("generation", 1),
        "replicas": counts.replicas,
        "updatedReplicas": counts.updated,
        "readyReplicas": counts.ready,
        "availableReplicas": counts.available,
        "unavailableReplicas": counts.unavailable,
        "conditions": [avail, prog],
    }
    if before.get("collisionCount"):
        status["collisionCount"] = before["collisionCount"]
    if status != before:
        cluster.patch_status(
            "apps/v1", "Deployment", d["metadata"]["name"], d["metadata"].get("namespace"), status
        )
    return requeue


def sync_deployments(cluster: Cluster, clock: Clock) -> float | None:
    return reconcile_each(
        cluster,
        clock,
        cluster.list("apps/v1", "Deployment"),
        lambda d: reconcile_deployment(cluster, clock, d),
    )
