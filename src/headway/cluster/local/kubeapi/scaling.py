"""The scale subresource (`autoscaling/v1` Scale) of kinds that declare one.

A Scale shows the replicas at the kind's spec and status paths and its label selector as a
string; writing one sets the spec path on the object, with the Scale's resourceVersion
(when given) as precondition, as `kubectl scale --resource-version` expects.
"""

from __future__ import annotations

from typing import Any

from headway.cluster.errors import Conflict
from headway.cluster.local.jsonvalues import clone
from headway.cluster.local.kubeapi import bodies, patches
from headway.cluster.local.kubeapi.catalog import ScalePaths
from headway.cluster.local.kubeapi.operations import Request, get
from headway.cluster.local.kubeapi.status import ApiError
from headway.cluster.local.store import LocalCluster
from headway.cluster.protocol import Obj
from headway.model.selectors import SelectorError, to_selector

__all__ = ["get_scale", "patch_scale", "replace_scale"]

_RETRIES = 5


def _paths(req: Request) -> ScalePaths:
    if req.kind.scale is None:
        raise ApiError(404, "NotFound", f"{req.kind.plural} has no scale subresource")
    return req.kind.scale


def _keys(json_path: str) -> list[str]:
    return [k for k in json_path.strip().lstrip(".").split(".") if k]


def _read(obj: Obj, json_path: str) -> Any:
    node: Any = obj
    for key in _keys(json_path):
        node = node.get(key) if isinstance(node, dict) else None
    return node


def _selector_text(obj: Obj, paths: ScalePaths) -> str:
    if paths.label_selector:
        found = _read(obj, paths.label_selector)
        return found if isinstance(found, str) else ""
    raw = _read(obj, ".spec.selector")
    try:
        return str(to_selector(raw)) if isinstance(raw, dict) else ""
    except SelectorError:
        return ""


def scale_of(obj: Obj, paths: ScalePaths) -> Obj:
    meta = obj["metadata"]
    shown = {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion",
                                  "creationTimestamp") if k in meta}
    replicas = _read(obj, paths.spec_replicas)
    status_replicas = _read(obj, paths.status_replicas)
    return {
        "kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": shown,
        "spec": {"replicas": replicas if isinstance(replicas, int) else 0},
        "status": {"replicas": status_replicas if isinstance(status_replicas, int) else 0,
                   "selector": _selector_text(obj, paths)},
    }


def get_scale(cluster: LocalCluster, req: Request) -> Obj:
    return scale_of(get(cluster, req), _paths(req))


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
    paths = _paths(req)
    live = get(cluster, req)
    updated = clone(live)
    node = updated
    *parents, last = _keys(paths.spec_replicas)
    for key in parents:
        node = node.setdefault(key, {})
    node[last] = replicas
    if rv is not None:
        updated["metadata"]["resourceVersion"] = rv
    if req.dry_run:
        return scale_of(updated, paths)
    stored = cluster.update(updated, field_manager=req.writer)
    return scale_of(stored, paths)
