"""Shapes of stored objects: what apply manages, what the server sets, and validation.

Purely computational; the store calls these before it writes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from headway.cluster.errors import Invalid
from headway.cluster.local.api.config_data import validate_config_data
from headway.cluster.local.api.jsonvalues import clone, not_json
from headway.model.obj import Obj
from headway.model.schema import describe
from headway.model.selectors import SelectorError, validate_key, validate_value

__all__ = [
    "ObjectKey",
    "managed_content",
    "spec_part",
    "validate_object",
    "with_content",
]

# Metadata the server writes (uid, resourceVersion, generation, timestamps, managedFields)
# is not part of what writers manage: an applied object's values for it are ignored, except
# uid and resourceVersion, which are preconditions.
# Metadata that writers own field by field, like the rest of the object.
MANAGED_METADATA = ("labels", "annotations", "finalizers", "ownerReferences")
_TOP_LEVEL_UNMANAGED = frozenset({"apiVersion", "kind", "metadata", "status"})
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


@dataclass(frozen=True)
class ObjectKey:
    """Where an object lives: group, kind, namespace ("" when cluster-scoped), name."""

    group: str
    kind: str
    namespace: str
    name: str

    def __str__(self) -> str:
        where = f"{self.namespace}/{self.name}" if self.namespace else self.name
        return f"{self.kind} {where}"


def managed_content(obj: Mapping[str, Any]) -> dict[str, Any]:
    """The part of `obj` that field managers own: all but identity, server metadata, status."""
    content = {k: v for k, v in obj.items() if k not in _TOP_LEVEL_UNMANAGED}
    meta = obj.get("metadata") or {}
    managed_meta = {k: meta[k] for k in MANAGED_METADATA if k in meta}
    if managed_meta:
        content["metadata"] = managed_meta
    return clone(content)


def with_content(base: Obj, content: Mapping[str, Any]) -> Obj:
    """`base` (identity, server metadata, status) with its managed part replaced by `content`."""
    out: Obj = {"apiVersion": base["apiVersion"], "kind": base["kind"]}
    meta = {k: v for k, v in base.get("metadata", {}).items() if k not in MANAGED_METADATA}
    meta.update(clone(dict(content.get("metadata") or {})))
    out["metadata"] = meta
    out.update({k: clone(v) for k, v in content.items() if k != "metadata"})
    if "status" in base:
        out["status"] = clone(base["status"])
    return out


def spec_part(obj: Mapping[str, Any]) -> dict[str, Any]:
    """What a change of bumps `metadata.generation`: all but metadata and status."""
    return {k: v for k, v in obj.items() if k not in _TOP_LEVEL_UNMANAGED}


def validate_object(obj: Mapping[str, Any], *, name_required: bool = True) -> None:
    """Raise `Invalid` naming the field when `obj` is not a well-formed object."""
    if not isinstance(obj, Mapping):
        raise Invalid("an object must be a mapping")
    for field in ("apiVersion", "kind"):
        if not isinstance(obj.get(field), str) or not obj.get(field):
            raise Invalid(f"{field}: required string")
    meta = obj.get("metadata")
    if not isinstance(meta, Mapping):
        raise Invalid(f"{obj['kind']}: metadata: required mapping")
    label = f"{obj['kind']} {meta.get('name') or meta.get('generateName') or '?'}"
    _validate_name(meta, label=label, name_required=name_required)
    _validate_string_map(meta, "labels", label=label, check_values=True)
    _validate_string_map(meta, "annotations", label=label, check_values=False)
    _validate_lists(meta, label=label)
    for part in ("spec", "status"):
        # As the API server's schema does: every kind's spec and status are objects, and
        # every reader (controllers, `headway get`) relies on that.
        if obj.get(part) is not None and not isinstance(obj.get(part), Mapping):
            raise Invalid(f"{label}: {part}: must be a mapping, got {describe(obj[part])}")
    validate_config_data(obj, label=label)
    problem = not_json(obj)
    if problem:
        raise Invalid(f"{label}: {problem}")


def _validate_name(meta: Mapping[str, Any], *, label: str, name_required: bool) -> None:
    name = meta.get("name")
    if name is None and not name_required and isinstance(meta.get("generateName"), str):
        return
    if not isinstance(name, str) or not name:
        raise Invalid(f"{label}: metadata.name: required")
    if len(name) > 253 or not _DNS_SUBDOMAIN.match(name):
        raise Invalid(
            f"{label}: metadata.name: {name!r} must be lowercase letters, digits, '-' or '.', "
            "start and end alphanumeric, at most 253 characters"
        )
    namespace = meta.get("namespace")
    valid = isinstance(namespace, str) and _DNS_LABEL.match(namespace)
    if namespace is not None and not valid:
        raise Invalid(f"{label}: metadata.namespace: {namespace!r} is not a valid namespace name")


def _validate_string_map(
    meta: Mapping[str, Any], field: str, *, label: str, check_values: bool
) -> None:
    values = meta.get(field)
    if values is None:
        return
    if not isinstance(values, Mapping):
        raise Invalid(f"{label}: metadata.{field}: must be a mapping of strings")
    for key, value in values.items():
        where = f"{label}: metadata.{field}[{key!r}]"
        if not isinstance(value, str):
            raise Invalid(f"{where}: value must be a string, got {value!r}")
        try:
            validate_key(str(key), where)
            if check_values:
                validate_value(value, where)
        except SelectorError as error:
            raise Invalid(str(error)) from None


def _validate_lists(meta: Mapping[str, Any], *, label: str) -> None:
    finalizers = meta.get("finalizers")
    if finalizers is not None and (
        not isinstance(finalizers, list) or not all(isinstance(f, str) for f in finalizers)
    ):
        raise Invalid(f"{label}: metadata.finalizers: must be a list of strings")
    refs = meta.get("ownerReferences")
    if refs is None:
        return
    if not isinstance(refs, list):
        raise Invalid(f"{label}: metadata.ownerReferences: must be a list")
    for index, ref in enumerate(refs):
        where = f"{label}: metadata.ownerReferences[{index}]"
        if not isinstance(ref, Mapping):
            raise Invalid(f"{where}: must be a mapping")
        for field in ("apiVersion", "kind", "name", "uid"):
            if not isinstance(ref.get(field), str) or not ref.get(field):
                raise Invalid(f"{where}.{field}: required string")
