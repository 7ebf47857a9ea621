"""The DaemonSet controller on a one-node runtime: one Pod per DaemonSet.

One step per DaemonSet (the decision, `daemon_step`, is pure):
  * no Pod: one is created from the template, named `<name>-<random>`, labelled
    `controller-revision-hash` (the template's hash) and `pod-template-generation`;
  * a Pod that has finished (`Failed`, `Succeeded`) is deleted, to be created again;
  * `RollingUpdate` (the default) replaces a Pod of an older template: with `maxSurge` 0
    (the default) the old Pod is deleted first and the new one created once it is gone,
    as `maxUnavailable: 1` allows on one node; with a `maxSurge` the new Pod is created
    first and the old one deleted once the new one is ready. `OnDelete` replaces nothing;
    a Pod the user deletes comes back with the current template;
  * status `desiredNumberScheduled` (1), `currentNumberScheduled`, `numberReady`,
    `numberAvailable`, `numberUnavailable`, `updatedNumberScheduled`,
    `numberMisscheduled` (0), `observedGeneration`, which Headway's health reads as Argo CD
    does. Node selectors, affinity and tolerations are not looked at: the one node runs
    every DaemonSet.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass

from headway.clock import Clock
from headway.cluster.errors import NotFound
from headway.cluster.local.workloads.recorder import note, reconcile_each
from headway.cluster.local.workloads.replicasets import pod_from_template, pods_of
from headway.cluster.protocol import Cluster
from headway.kube.pod_facts import is_available, is_ready, seconds_until_available
from headway.kube.pod_template import pod_template_hash
from headway.model.obj import Obj

__all__ = ["DaemonPod", "DaemonStep", "daemon_step", "reconcile_daemon_set", "sync_daemon_sets"]

FIELD_MANAGER = "headway-daemonset-controller"
REVISION_LABEL = "controller-revision-hash"


@dataclass(frozen=True)
class DaemonPod:
    name: str
    updated: bool  # at the current template's revision
    ready: bool
    terminating: bool
    finished: bool


@dataclass(frozen=True)
class DaemonStep:
    create: bool = False
    delete: tuple[str, ...] = ()


def daemon_step(pods: Sequence[DaemonPod], *, on_delete: bool, surge: bool) -> DaemonStep:
    """What to do for the one node. Purely computational."""
    finished = tuple(p.name for p in pods if p.finished and not p.terminating)
    if finished:
        return DaemonStep(delete=finished)
    live = [p for p in pods if not p.terminating]
    new = [p for p in live if p.updated]
    old = [p for p in live if not p.updated]
    if not pods:
        return DaemonStep(create=True)
    if on_delete or not old:
        return DaemonStep(delete=tuple(p.name for p in new[1:]))
    if surge:
        if not new:
            return DaemonStep(create=True)
        return DaemonStep(delete=tuple(p.name for p in old)) if new[0].ready else DaemonStep()
    return DaemonStep(delete=tuple(p.name for p in old))


def _view(pod: Obj, revision: str) -> DaemonPod:
    meta = pod["metadata"]
    return DaemonPod(
        name=str(meta["name"]),
        updated=(meta.get("labels") or {}).get(REVISION_LABEL) == revision,
        ready=is_ready(pod),
        terminating=bool(meta.get("deletionTimestamp")),
        finished=(pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"),
    )


def _surge(ds: Obj) -> bool:
    strategy = (ds.get("spec") or {}).get("updateStrategy") or {}
    raw = (strategy.get("rollingUpdate") or {}).get("maxSurge") or 0
    return str(raw).rstrip("%") not in ("0", "")


def reconcile_daemon_set(cluster: Cluster, clock: Clock, ds: Obj) -> float | None:
    meta, spec = ds["metadata"], ds.get("spec") or {}
    if meta.get("deletionTimestamp"):
        return None
    template = spec.get("template") or {}
    revision = pod_template_hash(template)
    pods = pods_of(cluster, ds)
    views = [_view(p, revision) for p in pods]
    on_delete = (spec.get("updateStrategy") or {}).get("type") == "OnDelete"
    step = daemon_step(views, on_delete=on_delete, surge=_surge(ds))
    for name in step.delete:
        with contextlib.suppress(NotFound):
            cluster.delete("v1", "Pod", name, meta.get("namespace") or "default")
            note(cluster, clock, ds, "SuccessfulDelete", f"Deleted pod: {name}")
    if step.create:
        pod = pod_from_template(ds, template, str(meta["name"]))
        pod["metadata"].setdefault("labels", {}).update(
            {REVISION_LABEL: revision, "pod-template-generation": str(meta.get("generation", 1))})
        cluster.apply(pod, field_manager=FIELD_MANAGER)
        note(cluster, clock, ds, "SuccessfulCreate", f"Created pod: {pod['metadata']['name']}")
    min_ready = float(spec.get("minReadySeconds") or 0)
    available = sum(1 for p in pods if not p["metadata"].get("deletionTimestamp")
                    and is_available(p, min_ready, clock.now()))
    _write_status(cluster, ds, views, available)
    live = [p for p in pods if not p["metadata"].get("deletionTimestamp")]
    return seconds_until_available(live, min_ready, clock.now())


def _write_status(cluster: Cluster, ds: Obj, views: list[DaemonPod], available: int) -> None:
    live = [v for v in views if not v.terminating and not v.finished]
    ready = sum(1 for v in live if v.ready)
    status = {
        "observedGeneration": ds["metadata"].get("generation", 1),
        "desiredNumberScheduled": 1,
        "currentNumberScheduled": min(1, len(live)),
        "numberMisscheduled": 0,
        "numberReady": min(1, ready),
        "numberAvailable": min(1, available),
        "numberUnavailable": 1 - min(1, available),
        "updatedNumberScheduled": min(1, sum(1 for v in live if v.updated)),
    }
    if status != (ds.get("status") or {}):
        meta = ds["metadata"]
        cluster.patch_status("apps/v1", "DaemonSet", meta["name"], meta.get("namespace"), status)


def sync_daemon_sets(cluster: Cluster, clock: Clock) -> float | None:
    return reconcile_each(cluster, clock, cluster.list("apps/v1", "DaemonSet"),
                          lambda ds: reconcile_daemon_set(cluster, clock, ds))
