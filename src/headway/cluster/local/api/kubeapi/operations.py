"""Each API verb done against the local store: get, list, create, replace, patch, delete,
and the status subresource. I/O at this edge only; the decisions live in the other modules.

Writes through the main resource leave `status` alone on kinds that have a status
subresource (as Kubernetes does); on kinds without one, a PUT or patch writes the status
too. A patch reads the live object, patches it and writes it back with the live
`resourceVersion` as precondition, retrying when another writer got in between (unless the
patch itself named a resourceVersion: then the conflict is the caller's).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from headway.cluster.errors import Conflict, NotFound
from headway.cluster.local.api.kubeapi import bodies, patches
from headway.cluster.local.api.kubeapi.catalog import ApiKind
from headway.cluster.local.api.kubeapi.paths import ListQuery, ResourcePath
from headway.cluster.local.api.kubeapi.status import ApiError, Target, success_body
from headway.cluster.local.api.schemas import FIELD_VALIDATIONS, FieldValidation
from headway.cluster.local.api.store import LocalCluster
from headway.cluster.protocol import PropagationPolicy
from headway.model.obj import Obj

__all__ = [
    "Request",
    "create",
    "delete",
    "delete_collection",
    "get",
    "list_objects",
    "patch",
    "replace",
]

_PATCH_RETRIES = 5
_FIELD_VALIDATIONS: dict[str, FieldValidation] = {v: v for v in FIELD_VALIDATIONS}
_SMP = "application/strategic-merge-patch+json"
_MERGE = "application/merge-patch+json"
_JSON_PATCH = "application/json-patch+json"
APPLY = "application/apply-patch+yaml"


@dataclass(frozen=True)
class Request:
    """One request to a resource, as the operations need it."""

    kind: ApiKind
    path: ResourcePath
    query: Mapping[str, str]
    body: bytes = b""
    content_type: str = "application/json"
    user_agent: str = ""

    @property
    def target(self) -> Target:
        """What errors name: the URL's object, or the one a create's body names."""
        name = self.path.name
        if not name and self.body:
            raw = _loaded(self.body)
            meta = raw.get("metadata") if isinstance(raw, dict) else None
            name = str(meta.get("name") or "") if isinstance(meta, dict) else ""
        return Target(resource=self.kind.plural, group=self.kind.group, name=name)

    @property
    def dry_run(self) -> bool:
        return self.query.get("dryRun") == "All"

    @property
    def field_validation(self) -> FieldValidation:
        """Kubernetes' `fieldValidation` for unknown fields; `Warn` (drop them) when absent,
        as an API server defaults it (kubectl sends `Strict`)."""
        return _FIELD_VALIDATIONS.get(self.query.get("fieldValidation", ""), "Warn")

    @property
    def field_manager(self) -> str:
        return self.query.get("fieldManager", "")

    @property
    def writer(self) -> str:
        """The field manager of a non-apply write: `fieldManager`, else, as Kubernetes
        does, the client's User-Agent up to its first `/` (`kubectl-scale`)."""
        agent = self.user_agent.split("/")[0][:128]
        return self.field_manager or agent or "unknown"


def _loaded(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return None


def get(cluster: LocalCluster, req: Request) -> Obj:
    return cluster.get(req.kind.api_version, req.kind.kind, req.path.name, req.path.namespace)


def list_objects(cluster: LocalCluster, req: Request, query: ListQuery) -> Obj:
    page = cluster.list_page(
        req.kind.api_version, req.kind.kind, namespace=req.path.namespace,
        label_selector=query.label_selector or None, limit=query.limit or None,
        continue_token=query.continue_token or None,
    )
    items = [o for o in page.items if query.field_selector.matches(o)]
    meta: dict[str, Any] = {"resourceVersion": page.resource_version}
    if page.continue_token:
        meta["continue"] = page.continue_token
        meta["remainingItemCount"] = page.remaining
    return {"kind": f"{req.kind.kind}List", "apiVersion": req.kind.api_version,
            "metadata": meta, "items": items}


def create(cluster: LocalCluster, req: Request) -> Obj:
    obj = bodies.object_for(req.kind, req.path, bodies.decode(req.body, req.content_type))
    if req.path.namespace and req.kind.namespaced:
        obj["metadata"]["namespace"] = req.path.namespace
    return cluster.create(obj, field_manager=req.writer, dry_run=req.dry_run,
                          field_validation=req.field_validation)


def replace(cluster: LocalCluster, req: Request) -> Obj:
    obj = bodies.object_for(req.kind, req.path, bodies.decode(req.body, req.content_type))
    if req.path.subresource == "status":
        return _write_status(cluster, req, obj, obj["metadata"].get("resourceVersion"))
    return _write(cluster, req, obj)


def _write(cluster: LocalCluster, req: Request, obj: Obj) -> Obj:
    """PUT: the store's update, also for `dryRun=All` (every check, nothing stored)."""
    return cluster.update(obj, field_manager=req.writer, with_status=not req.kind.has_status,
                          field_validation=req.field_validation, dry_run=req.dry_run)


def _write_status(cluster: LocalCluster, req: Request, obj: Obj, rv: str | None) -> Obj:
    return cluster.patch_status(req.kind.api_version, req.kind.kind, req.path.name,
                                req.path.namespace, obj.get("status") or {},
                                resource_version=rv, dry_run=req.dry_run)


def patch(cluster: LocalCluster, req: Request) -> Obj:
    content_type = req.content_type.split(";")[0].strip()
    if content_type == APPLY:
        return _apply(cluster, req)
    apply_patch = _patcher(req.kind, content_type)
    raw = bodies.decode(req.body, "application/json")
    for _ in range(_PATCH_RETRIES):
        live = get(cluster, req)
        patched = apply_patch(live, raw)
        obj = bodies.object_for(req.kind, req.path, patched)
        named_rv = _named_version(raw)
        obj["metadata"]["resourceVersion"] = named_rv or live["metadata"]["resourceVersion"]
        try:
            if req.path.subresource == "status":
                return _write_status(cluster, req, obj, obj["metadata"]["resourceVersion"])
            return _write(cluster, req, obj)
        except Conflict:
            if named_rv:
                raise
    raise Conflict(f"gave up after {_PATCH_RETRIES} attempts: the object kept changing")


def _named_version(raw: Any) -> str:
    if isinstance(raw, dict) and isinstance(raw.get("metadata"), dict):
        return str(raw["metadata"].get("resourceVersion") or "")
    return ""


def _patcher(kind: ApiKind, content_type: str) -> Callable[[Any, Any], Any]:
    if content_type == _MERGE:
        return patches.merge_patch
    if content_type == _JSON_PATCH:
        return patches.json_patch
    if content_type == _SMP and kind.builtin:
        return patches.strategic_merge_patch
    accepted = f"{_JSON_PATCH}, {_MERGE}, {APPLY}" + (f", {_SMP}" if kind.builtin else "")
    raise ApiError(415, "UnsupportedMediaType",
                   f"the body of the request was in an unknown format - accepted media types "
                   f"include: {accepted}")


def _apply(cluster: LocalCluster, req: Request) -> Obj:
    if not req.field_manager:
        raise ApiError(400, "BadRequest", "PATCH apply requests need a fieldManager")
    if req.path.subresource:
        raise ApiError(405, "MethodNotAllowed",
                       f"the local API does not take apply patches on {req.path.subresource}")
    obj = bodies.object_for(req.kind, req.path, bodies.decode(req.body, "yaml"))
    force = req.query.get("force", "").lower() in ("1", "true")
    return cluster.apply(obj, field_manager=req.field_manager, force=force,
                         dry_run=req.dry_run, field_validation=req.field_validation)


def delete(cluster: LocalCluster, req: Request) -> Obj:
    """Delete with the DeleteOptions of the body or query; the object while it still exists
    (finalizers, foreground deletion), else a success Status."""
    options = bodies.decode(req.body, "application/json") or {}
    if not isinstance(options, dict):
        raise ApiError(400, "BadRequest", "the body of a delete must be DeleteOptions")
    policy = options.get("propagationPolicy") or req.query.get("propagationPolicy")
    if policy is None and options.get("orphanDependents") is True:
        policy = "Orphan"
    if policy not in (None, "Foreground", "Background", "Orphan"):
        raise ApiError(400, "BadRequest", f"propagationPolicy: {policy!r} is not one of "
                                          "Foreground, Background, Orphan")
    preconditions = options.get("preconditions") or {}
    live = get(cluster, req)
    if req.dry_run or options.get("dryRun"):
        return live
    cluster.delete(req.kind.api_version, req.kind.kind, req.path.name, req.path.namespace,
                   propagation_policy=cast(PropagationPolicy, policy or "Background"),
                   uid=preconditions.get("uid"),
                   resource_version=preconditions.get("resourceVersion"))
    try:
        return get(cluster, req)
    except NotFound:  # gone at once: no finalizer or dependent held it
        return success_body(req.target, live["metadata"]["uid"])


def delete_collection(cluster: LocalCluster, req: Request, query: ListQuery) -> Obj:
    """Delete every object a list with the same selectors returns; answers that list."""
    listed = list_objects(cluster, req, dataclasses.replace(query, limit=0, continue_token=""))
    for obj in listed["items"]:
        meta = obj["metadata"]
        one = dataclasses.replace(req, path=dataclasses.replace(
            req.path, namespace=meta.get("namespace"), name=meta["name"]))
        with contextlib.suppress(NotFound):  # gone meanwhile: what was asked for
            delete(cluster, one)
    return listed
