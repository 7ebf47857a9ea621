"""Normalization both sides get before comparing: server-written fields removed, Secret
`stringData` folded into `data`. Purely computational."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

__all__ = ["IGNORED_ANNOTATIONS", "SERVER_METADATA", "fold_string_data", "strip_server_fields"]

SERVER_METADATA = (
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "managedFields",
    "selfLink",
)
IGNORED_ANNOTATIONS = (
    "deployment.kubernetes.io/revision",
    "kubectl.kubernetes.io/last-applied-configuration",
)


def strip_server_fields(obj: Mapping[str, Any], *, keep_status: bool = False) -> dict[str, Any]:
    """`obj` without `status` (unless `keep_status`: argocd-cm's `ignoreResourceStatusField`
    asks to compare it), server-set metadata and bookkeeping annotations.

    Only the maps it changes are copied (the top level, `metadata`, `annotations`), and
    nothing when there is nothing to strip (`obj` itself comes back); every other value is
    shared with `obj`, so callers must treat the result as read-only. A deep copy here was
    the largest single cost of a fleet refresh (bench/bench_refresh.py).
    """
    if isinstance(obj, dict) and not _has_server_fields(obj, keep_status=keep_status):
        return obj  # a desired object, mostly: nothing to strip, nothing to copy
    out = {k: v for k, v in obj.items() if keep_status or k != "status"}
    meta = out.get("metadata")
    if isinstance(meta, dict):
        meta = out["metadata"] = {k: v for k, v in meta.items() if k not in SERVER_METADATA}
        notes = meta.get("annotations")
        if isinstance(notes, dict):
            notes = {k: v for k, v in notes.items() if k not in IGNORED_ANNOTATIONS}
            if notes:
                meta["annotations"] = notes
            else:
                del meta["annotations"]
    return out


def _has_server_fields(obj: Mapping[str, Any], *, keep_status: bool) -> bool:
    if "status" in obj and not keep_status:
        return True
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return False
    if any(name in meta for name in SERVER_METADATA):
        return True
    notes = meta.get("annotations")
    return isinstance(notes, dict) and (
        not notes or any(name in notes for name in IGNORED_ANNOTATIONS)
    )


def fold_string_data(obj: Mapping[str, Any]) -> dict[str, Any]:
    """For a Secret, move `stringData` into `data` (base64), as the API server does;
    `stringData` wins over `data` for the same key. Anything else comes back as it is (a
    dict is not copied: treat the result as read-only)."""
    if obj.get("kind") != "Secret" or str(obj.get("apiVersion", "")) != "v1":
        return obj if isinstance(obj, dict) else dict(obj)
    string_data = obj.get("stringData")
    if not isinstance(string_data, Mapping):
        return obj if isinstance(obj, dict) else dict(obj)
    out = {k: v for k, v in obj.items() if k != "stringData"}
    data = dict(out.get("data") or {})
    for key, value in string_data.items():
        data[key] = base64.b64encode(str(value).encode()).decode()
    out["data"] = data
    return out
