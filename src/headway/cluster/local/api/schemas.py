"""Kubernetes' own schemas for what the local store accepts: wrong types and unknown fields.

The schemas are not written here: built-in kinds use the OpenAPI schemas of the newest
Kubernetes release that the `kubernetes-validate` package ships (its "strict" variant, where
an object refuses fields its type does not declare), and custom resources use their CRD's
`openAPIV3Schema`. Compiled validators are cached per kind (per CRD revision for custom
resources), so a write pays only for walking its own object.

What is checked is what a Kubernetes API server refuses while decoding a body: a value of the
wrong type (`replicas: three`, `containers: "nope"`) and a field the type does not have
(`spec.replica`), which field validation (`Strict`, `Warn`, `Ignore`) refuses, or drops.
Required fields are not checked: a server-side apply body may rightly leave them out.
Kinds without a shipped schema (Argo's, Istio's) are not checked here; Headway's own model
validates Argo's kinds before it acts on them.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any

from headway.cluster.local.api.schema_fastpath import Check, compile_check
from headway.cluster.protocol import FieldValidation
from headway.model.obj import Obj
from headway.model.schema import describe
from headway.model.yamlload import format_path

if TYPE_CHECKING:
    import referencing

__all__ = [
    "FIELD_VALIDATIONS",
    "KUBERNETES_VERSION",
    "FieldProblem",
    "FieldValidation",
    "SchemaCheck",
    "builtin_check",
    "crd_check",
    "without_unknown_fields",
]

FIELD_VALIDATIONS: tuple[FieldValidation, ...] = ("Strict", "Warn", "Ignore")
KUBERNETES_VERSION = "1.37"
_SCHEMA_DIR = f"v{KUBERNETES_VERSION}.0-local-strict"
_DEFINITIONS_URI = "https://kubernetes.io/api/_definitions.json"
# Kubernetes' own API groups; another group with the same first label (Istio's
# `networking.istio.io`) must not be checked against Kubernetes' `networking.k8s.io`.
_OWN_GROUP_SUFFIX = ".k8s.io"
# Fields every object has, whatever its CRD's schema says (the API server adds them).
_OBJECT_ENVELOPE = ("apiVersion", "kind", "metadata")
PathPart = str | int


@dataclass(frozen=True)
class FieldProblem:
    """One field a write cannot keep: its path in the object, and why."""

    path: tuple[PathPart, ...]
    message: str
    unknown: bool  # a field the type does not declare (field validation decides)

    def __str__(self) -> str:
        return f"{format_path(self.path)}: {self.message}"


@dataclass(frozen=True)
class SchemaCheck:
    """A compiled schema for one kind (one CRD version): a fast check that passes what is
    certainly valid, and the full validator that words the problems of the rest."""

    certainly_valid: Check
    validator: Any  # a jsonschema validator; its class is chosen by the schema's dialect

    def problems(self, obj: Mapping[str, Any]) -> tuple[FieldProblem, ...]:
        """Every wrong type and unknown field in `obj` (its status is not checked: the
        store keeps status apart from what writers manage)."""
        body = {k: v for k, v in obj.items() if k != "status"}
        if self.certainly_valid(body):
            return ()
        found: list[FieldProblem] = []
        for error in self.validator.iter_errors(body):
            found += _problems_of(error)
        return tuple(sorted(set(found), key=lambda p: (format_path(p.path), p.message)))


def builtin_check(api_version: str, kind: str) -> SchemaCheck | None:
    """The check for a built-in Kubernetes kind, or None when no schema is shipped for it."""
    group, _, version = api_version.rpartition("/")
    if group and "." in group and not group.endswith(_OWN_GROUP_SUFFIX):
        return None
    stem = f"{kind.lower()}-{group.split('.')[0]}-" if group else f"{kind.lower()}-"
    return _builtin_check(stem + version)


@functools.cache
def _builtin_check(stem: str) -> SchemaCheck | None:
    source = resources.files("kubernetes_validate").joinpath(
        "kubernetes-json-schema", _SCHEMA_DIR, f"{stem}.json"
    )
    if not source.is_file():
        return None
    import jsonschema  # imported on the first write: ~0.3 s that reads need not pay
    import referencing

    schema = json.loads(source.read_text(encoding="utf-8"))
    definitions = _definitions()
    registry = referencing.Registry().with_resource(_DEFINITIONS_URI, definitions)
    validator_class = jsonschema.validators.validator_for(schema)
    fast = compile_check(schema, definitions.contents["$defs"])
    return SchemaCheck(fast, validator_class(schema, registry=registry))


@functools.cache
def _definitions() -> referencing.Resource[Any]:
    import referencing

    source = resources.files("kubernetes_validate").joinpath(
        "kubernetes-json-schema", _SCHEMA_DIR, "_definitions.json"
    )
    return referencing.Resource.from_contents(json.loads(source.read_text(encoding="utf-8")))


def crd_check(crd: Obj, version: str) -> SchemaCheck | None:
    """The check for one version of a custom resource, from its CRD's `openAPIV3Schema`
    (None when that version has no schema). Cached per CRD revision."""
    meta = crd.get("metadata") or {}
    key = (str(meta.get("name")), str(meta.get("resourceVersion")), version)
    for entry in (crd.get("spec") or {}).get("versions") or []:
        if isinstance(entry, dict) and entry.get("name") == version:
            schema = (entry.get("schema") or {}).get("openAPIV3Schema")
            if isinstance(schema, dict):
                return _crd_check(key, json.dumps(schema, sort_keys=True))
    return None


@functools.lru_cache(maxsize=256)
def _crd_check(_key: tuple[str, str, str], schema_json: str) -> SchemaCheck:
    import jsonschema

    schema = _json_schema_of(json.loads(schema_json), top=True)
    return SchemaCheck(compile_check(schema, {}), jsonschema.Draft202012Validator(schema))


def _json_schema_of(node: Any, *, top: bool = False) -> Any:
    """An OpenAPI v3 structural schema as JSON Schema: `nullable`, `x-kubernetes-int-or-string`
    and pruning of undeclared fields (unless `x-kubernetes-preserve-unknown-fields`)."""
    if not isinstance(node, dict):
        return node
    out = {k: _json_schema_of(v) for k, v in node.items() if k not in ("properties", "items")}
    if isinstance(node.get("properties"), dict):
        out["properties"] = {k: _json_schema_of(v) for k, v in node["properties"].items()}
    if "items" in node:
        out["items"] = _json_schema_of(node["items"])
    if node.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    if isinstance(out.get("type"), str) and node.get("nullable"):
        out["type"] = [out["type"], "null"]
    closed = "properties" in node and "additionalProperties" not in node
    if closed and not node.get("x-kubernetes-preserve-unknown-fields"):
        out["additionalProperties"] = False
    if top:
        declared = out.setdefault("properties", {})
        for name in _OBJECT_ENVELOPE:
            declared.setdefault(name, {"type": "object"} if name == "metadata" else {})
    return out


def _problems_of(error: Any) -> Iterator[FieldProblem]:
    path = tuple(error.absolute_path)
    if error.validator == "required":
        return  # an apply body may leave required fields to another manager
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        declared = set((error.schema or {}).get("properties") or ())
        for name in sorted(k for k in error.instance if k not in declared):
            yield FieldProblem((*path, name), "unknown field", unknown=True)
        return
    if error.validator == "oneOf" and error.instance is None:
        return  # null matches both branches of the shipped int-or-string: a null is allowed
    yield FieldProblem(path, _message(error), unknown=False)


def _message(error: Any) -> str:
    if error.validator == "type":
        return f"expected {_types([error.schema])}, got {describe(error.instance)}"
    if error.validator in ("anyOf", "oneOf"):
        return f"expected {_types(error.validator_value)}, got {describe(error.instance)}"
    if error.validator == "enum":
        allowed = ", ".join(json.dumps(v) for v in error.validator_value if v is not None)
        return f"must be one of {allowed}, got {describe(error.instance)}"
    return str(error.message)


def _types(schemas: Sequence[Any]) -> str:
    """`integer or string` from the `type` of each schema (null left out: it is always allowed)."""
    names: list[str] = []
    for schema in schemas:
        declared = schema.get("type") if isinstance(schema, dict) else None
        for name in [declared] if isinstance(declared, str) else declared or ():
            if name != "null" and name not in names:
                names.append(name)
    return " or ".join(names) or "another value"


def without_unknown_fields(obj: Obj, problems: Sequence[FieldProblem]) -> Obj:
    """A copy of `obj` without the unknown fields `problems` name (what the API server stores
    under field validation `Warn` or `Ignore`)."""
    copy: Obj = json.loads(json.dumps(obj))
    for problem in problems:
        if problem.unknown:
            _drop(copy, problem.path)
    return copy


def _drop(node: Any, path: tuple[PathPart, ...]) -> None:
    for part in path[:-1]:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return
    if isinstance(node, dict):
        node.pop(path[-1], None)
