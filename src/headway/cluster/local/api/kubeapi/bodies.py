"""Request bodies and the objects they carry: decoding, and checks against the path.

Purely computational. A body that is not JSON (or YAML for apply patches), or an object
whose apiVersion, kind, name or namespace disagrees with the URL, is a `400 BadRequest`.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

from headway.cluster.local.api.kubeapi.catalog import ApiKind
from headway.cluster.local.api.kubeapi.paths import ResourcePath
from headway.cluster.local.api.kubeapi.status import ApiError
from headway.model import yamlload
from headway.model.obj import Obj

__all__ = ["decode", "object_for", "scale_replicas", "tidy"]


# kubectl's generators (create deployment/configmap/secret/namespace..., run, expose) send
# built-in kinds as protobuf whatever the server says (client-go forces protobuf for its
# typed clients and falls back to JSON only from CBOR), and no maintained library gives
# Python Kubernetes' protobuf schemas: so the answer says how to send YAML instead.
_PROTOBUF_REFUSED = (
    "the body is protobuf ({}), which the local runtime's API does not decode (it takes "
    "application/json and application/yaml); kubectl create/run/expose always send "
    "protobuf: generate YAML and apply it instead, e.g. kubectl create deployment web "
    "--image=nginx --dry-run=client -o yaml | kubectl apply -f -"
)


def decode(body: bytes, content_type: str) -> Any:
    """The body as JSON-like data (YAML when the content type says so)."""
    if not body.strip():
        return None
    if "protobuf" in content_type:
        raise ApiError(415, "UnsupportedMediaType", _PROTOBUF_REFUSED.format(content_type))
    if "cbor" in content_type:  # client-go retries a refused CBOR body as JSON by itself
        raise ApiError(415, "UnsupportedMediaType",
                       f"the body of the request was in an unknown format - accepted media "
                       f"types include: application/json, application/yaml "
                       f"(got {content_type})")
    try:
        if "yaml" in content_type:
            return yamlload.load_one(body)  # refuses alias bombs, which would stall the server
        return json.loads(body)
    except (ValueError, yaml.YAMLError) as error:
        raise ApiError(400, "BadRequest", f"the request body is not valid: {error}") from None
    except RecursionError:
        raise ApiError(400, "BadRequest", "the request body nests too deeply") from None


def object_for(kind: ApiKind, path: ResourcePath, raw: Any) -> Obj:
    """The object a write carries, checked against the kind and path it was sent to."""
    if not isinstance(raw, dict):
        raise ApiError(400, "BadRequest", f"the request body must be a {kind.kind} object")
    obj: Obj = dict(raw)
    if obj.get("apiVersion") != kind.api_version or obj.get("kind") != kind.kind:
        raise ApiError(400, "BadRequest",
                       f"the object is {obj.get('apiVersion')}/{obj.get('kind')}, but was sent "
                       f"to {kind.api_version}/{kind.kind} ({kind.plural})")
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        raise ApiError(400, "BadRequest", "metadata: required object")
    meta = obj["metadata"] = dict(meta)
    if path.name and meta.get("name") not in (None, path.name):
        raise ApiError(400, "BadRequest", f"the name of the object ({meta.get('name')}) does "
                                          f"not match the name on the URL ({path.name})")
    if path.name:
        meta["name"] = path.name
    if kind.namespaced and path.namespace:
        if meta.get("namespace") not in (None, "", path.namespace):
            raise ApiError(400, "BadRequest", "the namespace of the provided object does not "
                                              "match the namespace sent on the request")
        meta["namespace"] = path.namespace
    return obj


def scale_replicas(raw: Any) -> int:
    """`spec.replicas` of a Scale body."""
    spec = raw.get("spec") if isinstance(raw, dict) else None
    replicas = spec.get("replicas") if isinstance(spec, dict) else None
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
        raise ApiError(422, "Invalid", f"spec.replicas: must be a non-negative integer, got "
                                       f"{replicas!r}")
    return replicas


_OMITTED_WHEN_EMPTY = ("labels", "annotations", "finalizers", "ownerReferences")


def tidy(obj: Obj) -> Obj:
    """The object as a Kubernetes server would print it: empty label, annotation,
    finalizer and owner lists are left out (Go omits them), so `annotations: {}` written by
    a client does not show up as a difference in `kubectl diff`."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict) or not any(
        k in meta and not meta[k] for k in _OMITTED_WHEN_EMPTY
    ):
        return obj
    kept = {k: v for k, v in meta.items() if not (k in _OMITTED_WHEN_EMPTY and not v)}
    return dict(obj, metadata=kept)
