"""Resource-by-resource changes between two renders of one Application. Purely computational.

Both renders are desired states, so neither side gets the live side's defaults or projection
(those exist to forgive what a server adds); each is normalized the way the live diff
normalizes a desired object: server-written fields dropped, Secret `stringData` folded into
`data`, the Application's ignoreDifferences paths removed, argocd-cm's compare options
applied. Secret values never reach the diff: every `data`/`stringData` value becomes a run
of `+` (equal values, equal masks), so a reader sees that a key changed, never what it holds.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import yaml

from headway.diff import CompiledRule, object_key
from headway.diff.app_diff import ObjectKey
from headway.diff.compare import normalize_pair
from headway.model.argocd_diff import CompareOptions
from headway.model.obj import Obj

__all__ = ["ChangeKind", "ResourceChange", "compare_renders", "resource_title"]

# libyaml's emitter is several times faster than the pure-Python one.
_Dumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_SECRET_FIELDS = ("data", "stringData")
_DEFAULT_OPTIONS = CompareOptions()


class ChangeKind(StrEnum):
    ADDED = "added"
    REMOVED = "removed"
    CHANGED = "changed"


@dataclass(frozen=True)
class ResourceChange:
    """One resource that differs between the renders; `diff_lines` is a unified diff of
    its normalized YAML, BASE as `---` and HEAD as `+++`, Secret values masked."""

    key: ObjectKey
    kind: ChangeKind
    diff_lines: tuple[str, ...]

    @property
    def title(self) -> str:
        return resource_title(self.key)


def resource_title(key: ObjectKey) -> str:
    """`apps/Deployment/shop/web`, `/ConfigMap/shop/cfg` for the core group (as Argo CD)."""
    group, kind, namespace, name = key
    return f"{group}/{kind}/{namespace}/{name}"


def compare_renders(
    base: Sequence[Obj],
    head: Sequence[Obj],
    *,
    rules: Sequence[CompiledRule] = (),
    namespace: str = "",
    options: CompareOptions = _DEFAULT_OPTIONS,
) -> tuple[ResourceChange, ...]:
    """Every resource added, removed or changed from `base` to `head`, sorted by key.
    Objects without a namespace take `namespace` (the Application's destination);
    `options` are argocd-cm's `resource.compareoptions`, as the controller applies them."""
    before = _normalized(base, rules, namespace, options)
    after = _normalized(head, rules, namespace, options)
    changes: list[ResourceChange] = []
    for key in sorted(before.keys() | after.keys()):
        old, new = before.get(key), after.get(key)
        if old == new:
            continue
        kind = ChangeKind.CHANGED
        if old is None:
            kind = ChangeKind.ADDED
        elif new is None:
            kind = ChangeKind.REMOVED
        changes.append(ResourceChange(key, kind, _diff_lines(old, new)))
    return tuple(changes)


def _normalized(
    objects: Sequence[Obj], rules: Sequence[CompiledRule], namespace: str, options: CompareOptions
) -> dict[ObjectKey, dict[str, Any]]:
    out: dict[ObjectKey, dict[str, Any]] = {}
    for obj in objects:
        normalized, _ = normalize_pair(obj, None, rules, options)
        if normalized is not None:
            out[_key(obj, namespace)] = normalized
    return out


def _key(obj: Obj, namespace: str) -> ObjectKey:
    """The object's identity; a `generateName` hook is named `migrate-*`."""
    group, kind, ns, name = object_key(obj, default_namespace=namespace)
    if not name:
        generated = (obj.get("metadata") or {}).get("generateName")
        name = f"{generated}*" if generated else ""
    return group, kind, ns, name


def _diff_lines(old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> tuple[str, ...]:
    masks: dict[str, str] = {}
    before, after = _dump(_masked(old, masks)), _dump(_masked(new, masks))
    return tuple(difflib.unified_diff(before, after, "base", "head", lineterm=""))


def _masked(obj: Mapping[str, Any] | None, masks: dict[str, str]) -> Mapping[str, Any] | None:
    """A Secret with every value of `data` and `stringData` masked; other objects as given.
    A malformed `data` (not a mapping) is masked whole."""
    if obj is None or obj.get("kind") != "Secret":
        return obj
    out = dict(obj)
    for field in _SECRET_FIELDS:
        value = out.get(field)
        if isinstance(value, Mapping):
            out[field] = {k: _mask(v, masks) for k, v in value.items()}
        elif value is not None:
            out[field] = _mask(value, masks)
    return out


def _mask(value: Any, masks: dict[str, str]) -> str:
    return masks.setdefault(repr(value), "+" * (8 + len(masks)))


def _dump(obj: Mapping[str, Any] | None) -> list[str]:
    if obj is None:
        return []
    text = yaml.dump(dict(obj), Dumper=_Dumper, sort_keys=True, default_flow_style=False)
    return text.splitlines()
