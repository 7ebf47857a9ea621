"""Which lists merge by item key, which by value, and which lists and maps are replaced whole.

Kubernetes gives some lists "strategic merge" keys: containers are merged by `name`,
container ports by `containerPort` and `protocol`, and so on. The local store knows the
common ones below; every other list is atomic (replaced whole, owned as one field).
Maps merge key by key, except the selectors Kubernetes declares atomic (a LabelSelector is
`+structType=atomic`, a Service's selector and a Pod's nodeSelector `+mapType=atomic`):
one field, replaced whole, as a selector must be to mean what its writer meant.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal

__all__ = [
    "canonical_key", "is_atomic_map", "item_key", "key_matches", "list_keys", "list_semantics",
]

ListSemantics = Literal["map", "set", "atomic"]

_KEYED_LISTS: dict[str, tuple[str, ...]] = {
    "containers": ("name",),
    "initContainers": ("name",),
    "ephemeralContainers": ("name",),
    "env": ("name",),
    "volumes": ("name",),
    # Kubernetes keys volume mounts by the path they mount at, not by the volume's name.
    "volumeMounts": ("mountPath",),
    "imagePullSecrets": ("name",),
    "ownerReferences": ("uid",),
}
_SET_LISTS = frozenset({"finalizers"})
_ATOMIC_MAPS = frozenset({
    "selector", "nodeSelector", "podSelector", "namespaceSelector", "labelSelector",
})
_DEFAULTS = {"protocol": "TCP"}


def list_keys(field: str, items: Sequence[Any]) -> tuple[str, ...]:
    """The key fields of the associative list named `field` (empty when it is not one)."""
    if field == "ports":
        container = any(isinstance(i, Mapping) and "containerPort" in i for i in items)
        return ("containerPort", "protocol") if container else ("port", "protocol")
    return _KEYED_LISTS.get(field, ())


def is_atomic_map(field: str) -> bool:
    """Whether the map named `field` is one value (replaced and owned whole)."""
    return field in _ATOMIC_MAPS


def list_semantics(field: str, items: Sequence[Any]) -> ListSemantics:
    """How the list named `field` holding `items` merges and is owned."""
    if field in _SET_LISTS and all(isinstance(i, str | int | float | bool) for i in items):
        return "set"
    keys = list_keys(field, items)
    if keys and all(isinstance(i, Mapping) and _has_keys(i, keys) for i in items):
        return "map"
    return "atomic"


def _has_keys(item: Mapping[str, Any], keys: tuple[str, ...]) -> bool:
    return all(k in item or k in _DEFAULTS for k in keys)


def canonical_key(key: Mapping[str, Any]) -> str:
    return json.dumps(dict(key), sort_keys=True, separators=(",", ":"))


def item_key(item: Mapping[str, Any], keys: tuple[str, ...]) -> str:
    """The item's key as canonical JSON (`{"name":"web"}`), with defaults filled in."""
    values = tuple(item.get(k, _DEFAULTS.get(k)) for k in keys)
    if all(isinstance(v, str | int | float | bool) or v is None for v in values):
        # The usual case, and a hot one: cached, by type too (1, 1.0 and True are equal).
        return _scalar_key(keys, tuple((type(v).__name__, v) for v in values))
    return canonical_key(dict(zip(keys, values, strict=True)))


@functools.lru_cache(maxsize=4096)
def _scalar_key(keys: tuple[str, ...], typed_values: tuple[tuple[str, Any], ...]) -> str:
    return canonical_key(dict(zip(keys, (v for _, v in typed_values), strict=True)))


def key_matches(item: Any, key_json: str) -> bool:
    """Whether `item` is the one `key_json` (from `item_key`) names."""
    if not isinstance(item, Mapping):
        return False
    wanted = _parsed_key(key_json)
    return all(item.get(k, _DEFAULTS.get(k)) == v for k, v in wanted)


@functools.lru_cache(maxsize=4096)
def _parsed_key(key_json: str) -> tuple[tuple[str, Any], ...]:
    return tuple(json.loads(key_json).items())


def missing_keys(field: str, items: Sequence[Any]) -> list[int]:
    """Indexes of items of a keyed list that lack a key field (the apply is invalid)."""
    keys = list_keys(field, items)
    if not keys or not all(isinstance(i, Mapping) for i in items):
        return []
    return [n for n, i in enumerate(items) if not _has_keys(i, keys)]
