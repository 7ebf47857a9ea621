"""Any Kubernetes object: apiVersion, kind and metadata, with the group/version split.

Headway does not carry the full Kubernetes schema for core kinds (Service, HPA, ...): for
those it checks only what every object needs (apiVersion, kind, metadata.name) and keeps the
rest as a mapping. The `ObjectMeta` table here is shared by every typed Argo kind.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from headway.model import argocd_annotations
from headway.model import schema as s
from headway.model.diagnostics import Diagnostic
from headway.model.views import view
from headway.model.yamlload import Document

__all__ = [
    "METADATA",
    "K8sObject",
    "ObjectMeta",
    "OwnerReference",
    "TypedParts",
    "parse_object",
    "parse_typed",
    "split_api_version",
]


def split_api_version(api_version: str) -> tuple[str, str]:
    """`apps/v1` -> `("apps", "v1")`; the core group is empty: `v1` -> `("", "v1")`."""
    group, _, version = api_version.rpartition("/")
    return group, version


@view
class OwnerReference:
    api_version: str
    kind: str
    name: str
    uid: str | None
    controller: bool | None
    block_owner_deletion: bool | None


@view
class ObjectMeta:
    name: str | None
    generate_name: str | None
    namespace: str | None
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    finalizers: tuple[str, ...]
    owner_references: tuple[OwnerReference, ...]
    uid: str | None
    resource_version: str | None
    generation: int | None
    creation_timestamp: Any
    deletion_timestamp: Any
    managed_fields: Any


OWNER_REFERENCE = s.Schema(
    "OwnerReference",
    (
        s.Field("apiVersion", s.STR, required=True),
        s.Field("kind", s.STR, required=True),
        s.Field("name", s.STR, required=True),
        s.Field("uid", s.STR),
        s.Field("controller", s.BOOL),
        s.Field("blockOwnerDeletion", s.BOOL),
    ),
    OwnerReference,
)


def _name_or_generate_name(meta: Mapping[str, Any], path: s.Path, report: s.Reporter) -> None:
    if meta.get("name") is None and meta.get("generateName") is None:
        report.error((*path, "name"), "missing required field")


METADATA = s.Schema(
    "ObjectMeta",
    (
        s.Field("name", s.STR),
        s.Field("generateName", s.STR),
        s.Field("namespace", s.STR),
        s.Field("labels", s.STRING_MAP),
        s.Field("annotations", s.STRING_MAP),
        s.Field("finalizers", s.STRING_LIST),
        s.Field("ownerReferences", s.ListOf(s.Obj(OWNER_REFERENCE))),
        s.Field("uid", s.STR),
        s.Field("resourceVersion", s.STR),
        s.Field("generation", s.INT),
        s.Field("creationTimestamp", s.ANY),
        s.Field("deletionTimestamp", s.ANY),
        s.Field("managedFields", s.ANY),
    ),
    ObjectMeta,
    checks=(_name_or_generate_name, argocd_annotations.check_argocd_annotations),
)


@view
class K8sObject:
    """Any object; `raw` is the whole manifest as loaded."""

    api_version: str
    kind: str
    metadata: ObjectMeta
    raw: Mapping[str, Any]

    @property
    def group(self) -> str:
        return split_api_version(self.api_version)[0]

    @property
    def version(self) -> str:
        return split_api_version(self.api_version)[1]

    @property
    def name(self) -> str:
        return self.metadata.name or self.metadata.generate_name or ""

    @property
    def namespace(self) -> str | None:
        return self.metadata.namespace


# Only the fields every object shares are checked; core kinds carry extra metadata freely.
_ANY_KIND_METADATA = s.Schema(
    METADATA.name, METADATA.fields, ObjectMeta, METADATA.checks, open=True
)


def _envelope_checks(obj: Mapping[str, Any], report: s.Reporter) -> ObjectMeta | None:
    """Report what every object needs; the metadata's view when it was checked."""
    for key in ("apiVersion", "kind"):
        value = obj.get(key)
        if value is None:
            report.error((key,), "missing required field")
        elif not isinstance(value, str) or not value:
            report.error((key,), f"expected a non-empty string, got {s.describe(value)}")
    meta = obj.get("metadata")
    if _is_list(obj):
        # `kind: List` (and `FooList`) carries items, not a name of its own, and its metadata
        # is read by no one (kubectl and Argo CD apply the items): its view has none.
        view: ObjectMeta = s.build_view(METADATA, {"name": ""})
        return view
    if meta is None:
        report.error(("metadata", "name"), "missing required field")
        return None
    checked: ObjectMeta = s.parse_view(_ANY_KIND_METADATA, meta, ("metadata",), report)
    return checked


def _is_list(obj: Mapping[str, Any]) -> bool:
    kind = obj.get("kind")
    return isinstance(kind, str) and kind.endswith("List") and isinstance(obj.get("items"), list)


# Configuration files of local tools that are shaped like objects (apiVersion, kind) but that no
# API server serves, so applying one fails: the group, and what the file is for.
TOOL_CONFIG_GROUPS = {
    "kind.x-k8s.io": "the `kind` tool (`kind create cluster --config FILE`)",
    "k3d.io": "the `k3d` tool (`k3d cluster create --config FILE`)",
}


def _tool_config_error(obj: Mapping[str, Any]) -> str | None:
    """Why a document of a tool's configuration group cannot be applied, and what to do."""
    api_version = obj.get("apiVersion")
    if not isinstance(api_version, str):
        return None
    tool = TOOL_CONFIG_GROUPS.get(split_api_version(api_version)[0])
    if tool is None:
        return None
    return (
        f"{api_version} is a configuration file of {tool}, not a Kubernetes object: no API "
        "server serves it, so applying it fails; move it out of the directory an Application "
        "syncs, or leave it out with `directory.exclude` (Argo CD never applies a file the "
        "Application excludes, and `headway check` does not check it)"
    )


def parse_object(document: Document) -> tuple[K8sObject | None, list[Diagnostic]]:
    """A generic object, checking only apiVersion, kind and metadata."""
    report = s.Reporter(document)
    obj = document.obj
    if not isinstance(obj, Mapping):
        report.error((), f"expected a Kubernetes object (a mapping), got {s.describe(obj)}")
        return None, report.diagnostics
    tool_config = _tool_config_error(obj)
    if tool_config is not None:
        report.error(("apiVersion",), tool_config)
        return None, report.diagnostics
    meta = _envelope_checks(obj, report)
    if report.has_errors or meta is None:
        return None, report.diagnostics
    return K8sObject(obj["apiVersion"], obj["kind"], meta, obj), report.diagnostics


@dataclass(frozen=True)
class TypedParts:
    """The pieces of a typed Argo object, before its kind module wraps them."""

    api_version: str
    metadata: ObjectMeta
    spec: Any


@dataclass(frozen=True)
class _Envelope:
    """The view of a whole typed object, of which `TypedParts` keeps the pieces."""

    api_version: str
    kind: str
    metadata: ObjectMeta
    spec: Any
    status: Any = None


# The envelope table of each spec table (and whether it has a status), made on first use.
_ENVELOPES: dict[tuple[int, bool], tuple[s.Schema, s.Schema]] = {}


def _envelope(spec: s.Schema, *, status: bool) -> s.Schema:
    key = (id(spec), status)
    known = _ENVELOPES.get(key)
    if known is None or known[0] is not spec:
        table = s.Schema(
            spec.name.removesuffix("Spec"),
            (
                s.Field("apiVersion", s.STR, required=True),
                s.Field("kind", s.STR, required=True),
                s.Field("metadata", s.Obj(METADATA), required=True),
                s.Field("spec", s.Obj(spec), required=True),
                *((s.Field("status", s.ANY),) if status else ()),
            ),
            _Envelope,
        )
        known = _ENVELOPES[key] = (spec, table)  # the spec is held, so its id stays its own
    return known[1]


def parse_typed(
    document: Document, spec: s.Schema, *, status: bool = True
) -> tuple[TypedParts | None, list[Diagnostic]]:
    """Validate a whole Argo object against its spec table and build the spec's view.

    The view is built only when there is no error; warnings (unknown fields) do not stop it.
    """
    report = s.Reporter(document)
    envelope = s.parse_view(_envelope(spec, status=status), document.obj, (), report)
    if report.has_errors:
        return None, report.diagnostics
    return TypedParts(envelope.api_version, envelope.metadata, envelope.spec), report.diagnostics
