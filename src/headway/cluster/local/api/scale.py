"""The scale subresource of the local store: which kinds have one and what it reads.

Kubernetes serves `/scale` for Deployments, ReplicaSets and StatefulSets, and for custom
kinds whose CRD declares `subresources.scale` (Argo's Rollout does: `.spec.replicas`,
`.status.HPAReplicas`, `.status.selector`). A Scale is an `autoscaling/v1` object naming its
parent; writing `spec.replicas` through it writes the parent's replicas field. Pure
functions only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from headway.cluster.errors import Invalid, NotFound
from headway.model.obj import Obj
from headway.model.schema import describe
from headway.model.selectors import SelectorError, selector_from_object

__all__ = ["ScalePaths", "builtin_scale_paths", "crd_scale_paths", "scale_of", "with_replicas"]


@dataclass(frozen=True)
class ScalePaths:
    """Where a kind keeps what its Scale shows, as the CRD field's dotted JSON paths."""

    spec_replicas: str = ".spec.replicas"
    status_replicas: str = ".status.replicas"
    label_selector: str | None = None  # None: the string form of `.spec.selector`
    replicas_default: int | None = 1  # what an unset spec path reads as (None: an error)


_BUILTIN: dict[tuple[str, str], ScalePaths] = {
    ("apps", "Deployment"): ScalePaths(),
    ("apps", "ReplicaSet"): ScalePaths(),
    ("apps", "StatefulSet"): ScalePaths(),
    # Built into the local store; on Kubernetes it is a CRD declaring these paths.
    ("argoproj.io", "Rollout"): ScalePaths(status_replicas=".status.HPAReplicas",
                                           label_selector=".status.selector",
                                           replicas_default=None),
}


def builtin_scale_paths(group: str, kind: str) -> ScalePaths | None:
    return _BUILTIN.get((group, kind))


def crd_scale_paths(crd: Mapping[str, Any], version: str) -> ScalePaths:
    """The scale paths a CRD declares for `version`, or `NotFound` when it declares none."""
    spec = crd.get("spec") or {}
    for served in spec.get("versions") or []:
        if isinstance(served, Mapping) and served.get("name") == version:
            declared = (served.get("subresources") or {}).get("scale")
            if isinstance(declared, Mapping):
                return _declared_paths(declared, crd)
    kind = (spec.get("names") or {}).get("kind", "?")
    raise NotFound(f"{kind} has no scale subresource in {version}")


def _declared_paths(declared: Mapping[str, Any], crd: Mapping[str, Any]) -> ScalePaths:
    where = f"CustomResourceDefinition {(crd.get('metadata') or {}).get('name', '?')}"
    paths = {}
    for field in ("specReplicasPath", "statusReplicasPath"):
        value = declared.get(field)
        if not isinstance(value, str) or not value.startswith("."):
            raise Invalid(f"{where}: subresources.scale.{field}: required JSON path")
        paths[field] = value
    selector = declared.get("labelSelectorPath")
    return ScalePaths(spec_replicas=paths["specReplicasPath"],
                      status_replicas=paths["statusReplicasPath"],
                      label_selector=selector if isinstance(selector, str) else "",
                      replicas_default=None)


def _keys(path: str) -> list[str]:
    return [k for k in path.split(".") if k]


def _read(obj: Mapping[str, Any], path: str) -> Any:
    node: Any = obj
    for key in _keys(path):
        node = node.get(key) if isinstance(node, Mapping) else None
    return node


def scale_of(obj: Mapping[str, Any], paths: ScalePaths) -> Obj:
    """The `autoscaling/v1` Scale of `obj`. An unset replicas field reads as 1 on the
    built-in workloads (the default an API server writes into them); on a custom kind it is
    an error, as the API server answers."""
    meta = obj.get("metadata") or {}
    identity = {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion",
                                     "creationTimestamp") if k in meta}
    replicas = _read(obj, paths.spec_replicas)
    if not isinstance(replicas, int):
        if paths.replicas_default is None:
            raise Invalid(f"{obj.get('kind')} {meta.get('name')}: no replicas at "
                          f"{paths.spec_replicas} to show as a Scale")
        replicas = paths.replicas_default
    status_replicas = _read(obj, paths.status_replicas)
    return {
        "apiVersion": "autoscaling/v1",
        "kind": "Scale",
        "metadata": identity,
        "spec": {"replicas": replicas},
        "status": {
            "replicas": status_replicas if isinstance(status_replicas, int) else 0,
            "selector": _selector_text(obj, paths),
        },
    }


def _selector_text(obj: Mapping[str, Any], paths: ScalePaths) -> str:
    if paths.label_selector is not None:
        found = _read(obj, paths.label_selector) if paths.label_selector else None
        return found if isinstance(found, str) else ""
    selector = (obj.get("spec") or {}).get("selector")
    if not isinstance(selector, Mapping):
        return ""
    try:
        return str(selector_from_object(selector, path="spec.selector"))
    except SelectorError:
        return ""  # a malformed selector selects nothing; the workload reports it


def with_replicas(
    content: Mapping[str, Any], replicas: object, paths: ScalePaths, *, where: str
) -> dict[str, Any]:
    """`content` (an object's managed part) with its replicas field set to `replicas`."""
    if isinstance(replicas, bool) or not isinstance(replicas, int) or replicas < 0:
        raise Invalid(f"{where}: Scale spec.replicas: must be a non-negative integer, "
                      f"got {describe(replicas)}")
    *parents, last = _keys(paths.spec_replicas)
    updated = dict(content)
    node = updated
    for key in parents:
        child = node.get(key)
        node[key] = dict(child) if isinstance(child, Mapping) else {}
        node = node[key]
    node[last] = replicas
    return updated
