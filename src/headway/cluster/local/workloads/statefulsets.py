"""The StatefulSet controller: stable Pods `<name>-N`, each with its own claims.

One step per StatefulSet (the decision is `statefulset_plan.plan_step`):
  * the update revision is `<name>-<pod-template hash>`; each Pod carries its revision in
    the label `controller-revision-hash`, and `statefulset.kubernetes.io/pod-name`,
    `apps.kubernetes.io/pod-index`, `hostname` and (with `serviceName`) `subdomain`;
  * each `volumeClaimTemplates` entry gives the Pod of ordinal N the claim
    `<template>-<name>-N`, created before the Pod and kept when the Pod goes, so a Pod
    created again finds its data; `persistentVolumeClaimRetentionPolicy` decides whether it
    outlives a scale-down (`whenScaled`) and the set (`whenDeleted`): `Retain` (default)
    keeps it, `Delete` deletes it once its Pod is gone (the set's: as its dependent);
  * a Pod created at an older revision (below a `partition`) gets that revision's template,
    taken from a Pod that still runs it (the local runtime keeps no ControllerRevisions);
  * status `replicas`, `readyReplicas`, `availableReplicas`, `currentReplicas`,
    `updatedReplicas`, `currentRevision`, `updateRevision`, `observedGeneration`,
    `collisionCount`, which Headway's health reads as Argo CD does.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from headway.clock import Clock
from headway.cluster.errors import NotFound
from headway.cluster.local.workloads.recorder import note, reconcile_each
from headway.cluster.local.workloads.replicasets import owner_reference, pods_of
from headway.cluster.local.workloads.statefulset_plan import (
    PodView,
    StatefulSetShape,
    plan_step,
    revision_counts,
)
from headway.cluster.protocol import Cluster
from headway.kube.pod_facts import is_available, is_ready, seconds_until_available
from headway.kube.pod_template import pod_template_hash
from headway.model.obj import Obj

__all__ = ["FIELD_MANAGER", "reconcile_stateful_set", "sync_stateful_sets"]

FIELD_MANAGER = "headway-statefulset-controller"
REVISION_LABEL = "controller-revision-hash"
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"


def _ordinal(sts: Obj, pod: Obj) -> int | None:
    prefix = f"{sts['metadata']['name']}-"
    name = str(pod["metadata"]["name"])
    suffix = name[len(prefix):] if name.startswith(prefix) else ""
    return int(suffix) if suffix.isdigit() else None


def _view(sts: Obj, pod: Obj, now: datetime) -> PodView | None:
    ordinal = _ordinal(sts, pod)
    if ordinal is None:
        return None
    min_ready = float((sts.get("spec") or {}).get("minReadySeconds") or 0)
    return PodView(
        ordinal=ordinal,
        revision=str((pod["metadata"].get("labels") or {}).get(REVISION_LABEL) or ""),
        ready=is_ready(pod),
        terminating=bool(pod["metadata"].get("deletionTimestamp")),
        finished=(pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"),
        available=is_available(pod, min_ready, now),
    )


def _claim_names(sts: Obj) -> list[str]:
    templates = (sts.get("spec") or {}).get("volumeClaimTemplates") or []
    return [str((t.get("metadata") or {}).get("name") or "") for t in templates]


def _template_of_pod(sts: Obj, pod: Obj) -> dict[str, Any]:
    """The pod template a Pod was made from: its labels, annotations and spec without what
    the controller added for its ordinal."""
    claims = set(_claim_names(sts))
    spec = copy.deepcopy(pod.get("spec") or {})
    spec["volumes"] = [v for v in spec.get("volumes") or [] if v.get("name") not in claims]
    for added in ("hostname", "subdomain"):
        spec.pop(added, None)
    labels = {k: v for k, v in (pod["metadata"].get("labels") or {}).items()
              if k not in (REVISION_LABEL, POD_NAME_LABEL, POD_INDEX_LABEL)}
    meta: dict[str, Any] = {"labels": labels}
    if pod["metadata"].get("annotations"):
        meta["annotations"] = dict(pod["metadata"]["annotations"])
    return {"metadata": meta, "spec": spec}


def _stateful_pod(sts: Obj, template: Mapping[str, Any], ordinal: int, revision: str) -> Obj:
    meta, spec = sts["metadata"], sts.get("spec") or {}
    name = f"{meta['name']}-{ordinal}"
    tmeta = template.get("metadata") or {}
    labels = {**(tmeta.get("labels") or {}), REVISION_LABEL: revision, POD_NAME_LABEL: name,
              POD_INDEX_LABEL: str(ordinal)}
    pod_meta: dict[str, Any] = {"name": name, "namespace": meta.get("namespace") or "default",
                                "labels": labels, "ownerReferences": [owner_reference(sts)]}
    if tmeta.get("annotations"):
        pod_meta["annotations"] = dict(tmeta["annotations"])
    pod_spec = copy.deepcopy(template.get("spec") or {})
    pod_spec["hostname"] = name
    if spec.get("serviceName"):
        pod_spec["subdomain"] = str(spec["serviceName"])
    claims = _claim_names(sts)
    volumes = [v for v in pod_spec.get("volumes") or [] if v.get("name") not in claims]
    volumes += [{"name": c, "persistentVolumeClaim": {"claimName": f"{c}-{name}"}}
                for c in claims]
    if volumes:
        pod_spec["volumes"] = volumes
    return {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": pod_spec}


def _ensure_claims(cluster: Cluster, clock: Clock, sts: Obj, pod_name: str) -> None:
    meta, spec = sts["metadata"], sts.get("spec") or {}
    namespace = str(meta.get("namespace") or "default")
    selector = (spec.get("selector") or {}).get("matchLabels") or {}
    for template in spec.get("volumeClaimTemplates") or []:
        tmeta = template.get("metadata") or {}
        name = f"{tmeta.get('name')}-{pod_name}"
        with contextlib.suppress(NotFound):
            cluster.get("v1", "PersistentVolumeClaim", name, namespace)
            continue
        claim_meta: dict[str, Any] = {"name": name, "namespace": namespace,
                                      "labels": {**selector, **(tmeta.get("labels") or {})}}
        if _retention(sts, "whenDeleted") == "Delete":  # goes with the set (garbage collector)
            claim_meta["ownerReferences"] = [{**owner_reference(sts), "controller": False}]
        claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": claim_meta,
                 "spec": copy.deepcopy(template.get("spec") or {})}
        cluster.apply(claim, field_manager=FIELD_MANAGER)
        note(cluster, clock, sts, "SuccessfulCreate",
             f"create Claim {name} Pod {pod_name} in StatefulSet {meta['name']} success")


def _retention(sts: Obj, when: str) -> str:
    policy = (sts.get("spec") or {}).get("persistentVolumeClaimRetentionPolicy") or {}
    return str(policy.get(when) or "Retain")


def _delete_scaled_down_claims(cluster: Cluster, clock: Clock, sts: Obj, pods: list[Obj]) -> None:
    """`whenScaled: Delete`: the claims of ordinals at or above `replicas` whose Pod is gone."""
    if _retention(sts, "whenScaled") != "Delete":
        return
    meta = sts["metadata"]
    replicas = int((sts.get("spec") or {}).get("replicas", 1))
    namespace = str(meta.get("namespace") or "default")
    have_pods = {_ordinal(sts, p) for p in pods}
    for claim in cluster.list("v1", "PersistentVolumeClaim", namespace=namespace):
        name = str(claim["metadata"]["name"])
        for template in _claim_names(sts):
            prefix = f"{template}-{meta['name']}-"
            ordinal = name[len(prefix):] if name.startswith(prefix) else ""
            if ordinal.isdigit() and int(ordinal) >= replicas and int(ordinal) not in have_pods:
                with contextlib.suppress(NotFound):
                    cluster.delete("v1", "PersistentVolumeClaim", name, namespace)
                    note(cluster, clock, sts, "SuccessfulDelete",
                         f"delete Claim {name} in StatefulSet {meta['name']} successful")


def _template_for(sts: Obj, revision: str, update: str, pods: list[Obj]) -> Mapping[str, Any]:
    if revision != update:
        for pod in pods:
            if (pod["metadata"].get("labels") or {}).get(REVISION_LABEL) == revision:
                return _template_of_pod(sts, pod)
    return (sts.get("spec") or {}).get("template") or {}


def reconcile_stateful_set(cluster: Cluster, clock: Clock, sts: Obj) -> float | None:
    """One step for one StatefulSet; returns seconds until a ready Pod becomes available
    (`minReadySeconds`), or None."""
    meta = sts["metadata"]
    if meta.get("deletionTimestamp"):
        return None
    template = (sts.get("spec") or {}).get("template") or {}
    update = f"{meta['name']}-{pod_template_hash(template)}"
    shape = StatefulSetShape.of(sts, update_revision=update)
    pods = pods_of(cluster, sts)
    views = [v for v in (_view(sts, p, clock.now()) for p in pods) if v is not None]
    step = plan_step(shape, views)
    namespace = str(meta.get("namespace") or "default")
    for ordinal in step.delete:
        name = f"{meta['name']}-{ordinal}"
        with contextlib.suppress(NotFound):
            cluster.delete("v1", "Pod", name, namespace)
            note(cluster, clock, sts, "SuccessfulDelete",
                 f"delete Pod {name} in StatefulSet {meta['name']} successful")
    for ordinal, revision in step.create:
        pod = _stateful_pod(sts, _template_for(sts, revision, update, pods), ordinal, revision)
        _ensure_claims(cluster, clock, sts, str(pod["metadata"]["name"]))
        cluster.apply(pod, field_manager=FIELD_MANAGER)
        note(cluster, clock, sts, "SuccessfulCreate",
             f"create Pod {pod['metadata']['name']} in StatefulSet {meta['name']} successful")
    _delete_scaled_down_claims(cluster, clock, sts, pods)
    _write_status(cluster, sts, shape, views)
    min_ready = float((sts.get("spec") or {}).get("minReadySeconds") or 0)
    return seconds_until_available(pods, min_ready, clock.now())


def _write_status(cluster: Cluster, sts: Obj, shape: StatefulSetShape,
                  views: list[PodView]) -> None:
    before = sts.get("status") or {}
    status = {"observedGeneration": sts["metadata"].get("generation", 1),
              **revision_counts(shape, views),
              "collisionCount": int(before.get("collisionCount") or 0)}
    if status != before:
        meta = sts["metadata"]
        cluster.patch_status("apps/v1", "StatefulSet", meta["name"], meta.get("namespace"),
                             status)


def sync_stateful_sets(cluster: Cluster, clock: Clock) -> float | None:
    return reconcile_each(cluster, clock, cluster.list("apps/v1", "StatefulSet"),
                          lambda sts: reconcile_stateful_set(cluster, clock, sts))
