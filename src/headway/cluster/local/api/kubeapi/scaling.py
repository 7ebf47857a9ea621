"""The scale subresource (`autoscaling/v1` Scale) of kinds that declare one.

The store computes Scales (`LocalCluster.get_scale` / `update_scale`: the kind's spec and
status paths, a Rollout's HPAReplicas, a workload's default of one replica); this module
decodes the requests, with the Scale's resourceVersion (when given) as precondition, as
`kubectl scale --resource-version` expects.
"""

from __future__ import annotations

from headway.cluster.errors import Conflict
from headway.cluster.local.api.kubeapi import bodies, patches
from headway.cluster.local.api.kubeapi.catalog import ScalePaths
from headway.cluster.local.api.kubeapi.operations import Request
from headway.cluster.local.api.kubeapi.status import ApiError
from headway.cluster.local.api.store import LocalCluster
from headway.model.obj import Obj

__all__ = ["get_scale", "patch_scale", "replace_scale"]

_RETRIES = 5


def _paths(req: Request) -> ScalePaths:
    if req.kind.scale is None:
        raise ApiError(404, "NotFound", f"{req.kind.plural} has no scale subresource")
    return req.kind.scale


def get_scale(cluster: LocalCluster, req: Request) -> Obj:
    """The store's Scale (its paths, a Rollout's HPAReplicas, a workload's default 1)."""
    _paths(req)
    return cluster.get_scale(req.kind.api_version, req.kind.kind, req.path.name,
                             req.path.namespace)


def replace_scale(cluster: LocalCluster, req: Request) -> Obj:
    raw = bodies.decode(req.body, req.content_type)
    rv = raw.get("metadata", {}).get("resourceVersion") if isinstance(raw, dict) else None
    return _set_replicas(cluster, req, bodies.scale_replicas(raw), rv or None)


def patch_scale(cluster: LocalCluster, req: Request) -> Obj:
    content_type = req.content_type.split(";")[0].strip()
    patch = {"application/merge-patch+json": patches.merge_patch,
             "application/json-patch+json": patches.json_patch,
             "application/strategic-merge-patch+json": patches.strategic_merge_patch}.get(
                 content_type)
    if patch is None:
        raise ApiError(415, "UnsupportedMediaType", f"the scale subresource takes no "
                                                    f"{content_type} patch")
    raw = bodies.decode(req.body, "application/json")
    for _ in range(_RETRIES):
        current = get_scale(cluster, req)
        patched = patch(current, raw)
        named = (raw.get("metadata") or {}).get("resourceVersion") if isinstance(raw, dict) \
            else None
        try:
            return _set_replicas(cluster, req, bodies.scale_replicas(patched),
                                 named or current["metadata"]["resourceVersion"])
        except Conflict:
            if named:
                raise
    raise Conflict(f"gave up after {_RETRIES} attempts: the object kept changing")


def _set_replicas(cluster: LocalCluster, req: Request, replicas: int, rv: str | None) -> Obj:
    _paths(req)
    return cluster.update_scale(
        req.kind.api_version, req.kind.kind, req.path.name, req.path.namespace,
        replicas=replicas, field_manager=req.writer, resource_version=rv, dry_run=req.dry_run)
