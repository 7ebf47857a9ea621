"""Which fields of a generated Application an update would take back from another writer.
Pure.

Argo CD's ApplicationSet controller rewrites a generated Application's spec at every step,
silently reverting what anyone else wrote there (the seeds: a preview deployer's pinned image
digest). Headway still writes the set's spec, as Argo does, but names each field it takes
back and who wrote it (from `metadata.managedFields`), so the owner can list it in
`ignoreApplicationDifferences` or `preservedFields`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from headway.diff.managed_fields import decode_owners, resolve_element_path
from headway.diff.paths import get_path
from headway.model.yamlload import format_path

__all__ = ["TakenBack", "taken_back"]


@dataclass(frozen=True, order=True)
class TakenBack:
    field: str
    writer: str


def taken_back(
    live: Mapping[str, Any], updated: Mapping[str, Any], *, manager: str
) -> list[TakenBack]:
    """The `spec` fields `updated` changes that a manager other than `manager` wrote last
    in `live`, each with that writer (the first by name when several share it)."""
    owners = decode_owners((live.get("metadata") or {}).get("managedFields"))
    found: dict[tuple[str | int, ...], str] = {}
    for element_path, managers in owners.items():
        others = sorted(managers - {manager})
        if not others:
            continue
        path = resolve_element_path(live, element_path)
        if not path or path[0] != "spec":
            continue
        if get_path(live, path) != get_path(updated, path):
            found[path] = others[0]
    # one entry per field: a field under another one already named is left out
    outer = [p for p in found if not any(p[: len(q)] == q and p != q for q in found)]
    return sorted(TakenBack(format_path(p), found[p]) for p in outer)
