"""The edge of per-role pod metadata: write what `headway.rollout.pod_metadata` decided into
each ReplicaSet's pod template, then into the pods it owns (Argo's order: pods the ReplicaSet
creates between the two writes already carry the new metadata). Pods are written again at
every reconcile where they differ, so a controller killed between the two writes, or a pod
write that failed, is mended by the next step."""

from __future__ import annotations

import copy
from collections.abc import Mapping

from headway.cluster.errors import NotFound
from headway.cluster.protocol import Cluster
from headway.controllers.rollout.inputs import FIELD_MANAGER, owned_by, write_replica_set
from headway.model.obj import Obj
from headway.rollout.pod_metadata import (
    EPHEMERAL_METADATA_ANNOTATION,
    RoleMetadata,
    injected_metadata,
    synced_metadata,
)

__all__ = ["sync_role_metadata"]


def sync_role_metadata(
    cluster: Cluster, namespace: str, wanted: Mapping[str, RoleMetadata]
) -> None:
    for name, metadata in sorted(wanted.items()):
        try:
            rs = cluster.get("apps/v1", "ReplicaSet", name, namespace)
        except NotFound:
            continue
        injected = injected_metadata(rs["metadata"].get("annotations") or {})
        _sync_template(cluster, rs, injected=injected, wanted=metadata)
        if int((rs.get("spec") or {}).get("replicas") or 0) > 0:
            _sync_pods(cluster, rs, injected=injected, wanted=metadata)


def _sync_template(
    cluster: Cluster, rs: Obj, *, injected: RoleMetadata, wanted: RoleMetadata
) -> None:
    template = (rs.get("spec") or {}).get("template") or {}
    synced = synced_metadata(template.get("metadata") or {}, injected=injected, wanted=wanted)
    remembered = (rs["metadata"].get("annotations") or {}).get(EPHEMERAL_METADATA_ANNOTATION)
    note = None if wanted.empty else wanted.as_json()
    if synced is None and remembered == note:
        return
    updated = copy.deepcopy(rs)
    if synced is not None:
        updated["spec"]["template"]["metadata"] = synced
    write_replica_set(cluster, updated, annotations={EPHEMERAL_METADATA_ANNOTATION: note})


def _sync_pods(cluster: Cluster, rs: Obj, *, injected: RoleMetadata, wanted: RoleMetadata) -> None:
    uid = str(rs["metadata"].get("uid"))
    namespace = rs["metadata"].get("namespace") or "default"
    for pod in cluster.list("v1", "Pod", namespace=namespace):
        if not owned_by(pod, uid) or pod["metadata"].get("deletionTimestamp"):
            continue
        synced = synced_metadata(pod["metadata"], injected=injected, wanted=wanted)
        if synced is None:
            continue
        try:
            cluster.update({**pod, "metadata": synced}, field_manager=FIELD_MANAGER)
        except NotFound:
            continue  # gone meanwhile
