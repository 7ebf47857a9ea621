"""Discovery documents: `/version`, `/api`, `/apis`, a group-version's resource list, and
an OpenAPI v3 index and documents that are just enough for kubectl. Purely computational.

The OpenAPI documents describe each kind as an object with `apiVersion`, `kind`,
`metadata`, and a `spec` and `status` that accept any fields: enough for kubectl to
find the kind (`x-kubernetes-group-version-kind`), to see that writes take
`fieldValidation`, `fieldManager` and `dryRun`, and for `kubectl explain KIND` to answer.
They are not Kubernetes' full schemas: the local store does not validate fields by schema.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from headway.cluster.local.api.kubeapi.catalog import ApiKind, Catalog

__all__ = [
    "KUBERNETES_VERSION",
    "api_group_list",
    "api_versions",
    "openapi_document",
    "openapi_index",
    "resource_list",
    "version_info",
]

KUBERNETES_VERSION = (1, 31)  # the API version whose behaviour the local API follows


def version_info() -> dict[str, str]:
    major, minor = KUBERNETES_VERSION
    return {
        "major": str(major), "minor": str(minor),
        "gitVersion": f"v{major}.{minor}.0+headway", "gitCommit": "", "gitTreeState": "clean",
        "buildDate": "", "goVersion": "", "compiler": "", "platform": "linux/amd64",
    }


def api_versions() -> dict[str, Any]:
    return {
        "kind": "APIVersions", "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": ""}],
    }


def api_group_list(catalog: Catalog) -> dict[str, Any]:
    groups = []
    for name, versions in sorted(catalog.groups().items()):
        listed = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
        groups.append({"name": name, "versions": listed, "preferredVersion": listed[0]})
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def resource_list(catalog: Catalog, group: str, version: str) -> dict[str, Any] | None:
    """A group-version's APIResourceList, or None when nothing is served there."""
    kinds = catalog.in_version(group, version)
    if not kinds:
        return None
    resources: list[dict[str, Any]] = []
    for kind in sorted(kinds, key=lambda k: k.plural):
        resources.append(_resource(kind))
        if kind.has_status:
            resources.append(_subresource(kind, "status", kind.kind, ["get", "patch", "update"]))
        if kind.scale is not None:
            scale = _subresource(kind, "scale", "Scale", ["get", "patch", "update"])
            resources.append(dict(scale, group="autoscaling", version="v1"))
        if kind.group == "" and kind.plural == "pods":  # how kubectl drain finds evictions
            eviction = _subresource(kind, "eviction", "Eviction", ["create"])
            resources.append(dict(eviction, group="policy", version="v1"))
    group_version = f"{group}/{version}" if group else version
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version,
            "resources": resources}


def _resource(kind: ApiKind) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": kind.plural, "singularName": kind.singular, "namespaced": kind.namespaced,
        "kind": kind.kind, "verbs": list(kind.verbs),
    }
    if kind.short_names:
        entry["shortNames"] = list(kind.short_names)
    if kind.categories:
        entry["categories"] = list(kind.categories)
    return entry


def _subresource(kind: ApiKind, name: str, shown: str, verbs: list[str]) -> dict[str, Any]:
    return {"name": f"{kind.plural}/{name}", "singularName": "", "namespaced": kind.namespaced,
            "kind": shown, "verbs": verbs}


def _gv_path(group: str, version: str) -> str:
    return f"apis/{group}/{version}" if group else f"api/{version}"


def openapi_index(catalog: Catalog) -> dict[str, Any]:
    """`/openapi/v3`: one entry per group-version, with a hash that changes with its kinds."""
    paths = {}
    for group, version in sorted({(k.group, k.version) for k in catalog.kinds}):
        document = json.dumps(openapi_document(catalog, group, version), sort_keys=True)
        digest = hashlib.sha256(document.encode()).hexdigest()[:32].upper()
        path = _gv_path(group, version)
        paths[path] = {"serverRelativeURL": f"/openapi/v3/{path}?hash={digest}"}
    return {"paths": paths}


def openapi_document(catalog: Catalog, group: str, version: str) -> dict[str, Any]:
    kinds = catalog.in_version(group, version)
    schemas: dict[str, Any] = {}
    paths: dict[str, Any] = {}
    for kind in kinds:
        schemas[_schema_name(kind)] = _kind_schema(kind)
        paths.update(_kind_paths(kind))
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes (Headway local runtime)",
                 "version": version_info()["gitVersion"]},
        "paths": paths,
        "components": {"schemas": schemas},
    }


def _schema_name(kind: ApiKind) -> str:
    group = ".".join(reversed(kind.group.split("."))) if kind.group else "core"
    return f"{group}.{kind.version}.{kind.kind}"


def _kind_schema(kind: ApiKind) -> dict[str, Any]:
    free: dict[str, Any] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    return {
        "description": f"{kind.kind} ({kind.api_version}) as the Headway local runtime stores "
                       "it: fields are kept as written, not checked against a schema.",
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string", "description": "The versioned schema of this "
                                                            "representation of an object."},
            "kind": {"type": "string", "description": "The REST resource this object "
                                                      "represents."},
            "metadata": {"type": "object", "description": "Standard object metadata.",
                         "x-kubernetes-preserve-unknown-fields": True},
            "spec": dict(free, description=f"The desired state of the {kind.kind}."),
            "status": dict(free, description=f"The observed state of the {kind.kind}."),
        },
        "x-kubernetes-group-version-kind": [
            {"group": kind.group, "version": kind.version, "kind": kind.kind}
        ],
    }


_WRITE_PARAMETERS = [
    {"name": name, "in": "query", "schema": {"type": "string"}, "uniqueItems": True}
    for name in ("dryRun", "fieldManager", "fieldValidation")
]


def _kind_paths(kind: ApiKind) -> dict[str, Any]:
    base = f"/{_gv_path(kind.group, kind.version)}"
    if kind.namespaced:
        base += "/namespaces/{namespace}"
    ref = {"$ref": f"#/components/schemas/{_schema_name(kind)}"}
    body = {"content": {"application/json": {"schema": ref}}}
    operation = {"parameters": _WRITE_PARAMETERS, "responses": {"200": body}}
    gvk = {"group": kind.group, "version": kind.version, "kind": kind.kind}
    return {
        f"{base}/{kind.plural}": {
            "post": dict(operation, requestBody=body, **{"x-kubernetes-group-version-kind": gvk}),
        },
        f"{base}/{kind.plural}/{{name}}": {
            "put": dict(operation, requestBody=body, **{"x-kubernetes-group-version-kind": gvk}),
            "patch": dict(operation, **{"x-kubernetes-group-version-kind": gvk}),
        },
    }
