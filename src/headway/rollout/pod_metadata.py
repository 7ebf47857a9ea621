"""Labels and annotations per role (`canaryMetadata`/`stableMetadata`, blue-green's
`previewMetadata`/`activeMetadata`), as Argo Rollouts keeps them. Purely computational.

While an update runs, the new ReplicaSet's pods carry the canary (preview) metadata and the
stable ReplicaSet's pods the stable (active) metadata; once fully rolled out, the new one is
the stable one and carries the stable metadata; every other ReplicaSet carries none. A role
change is made in place: first the ReplicaSet's pod template, so pods it creates meanwhile
are right, then every pod it owns. What was injected is remembered on the ReplicaSet in the
annotation `rollout.argoproj.io/ephemeral-metadata` (JSON), so that only keys put there by
the Rollout are removed later, never a label or annotation someone else set.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from headway.model.rollout_steps import PodTemplateMetadata

if TYPE_CHECKING:
    from headway.rollout.context import RolloutContext

__all__ = [
    "EPHEMERAL_METADATA_ANNOTATION",
    "NO_METADATA",
    "RoleMetadata",
    "injected_metadata",
    "role_metadata",
    "synced_metadata",
]

EPHEMERAL_METADATA_ANNOTATION = "rollout.argoproj.io/ephemeral-metadata"


@dataclass(frozen=True)
class RoleMetadata:
    """What the pods of one ReplicaSet should carry for their role (empty: nothing)."""

    labels: Mapping[str, str]
    annotations: Mapping[str, str]

    @property
    def empty(self) -> bool:
        return not self.labels and not self.annotations

    def as_json(self) -> str:
        shown: dict[str, Any] = {}
        if self.labels:
            shown["labels"] = dict(sorted(self.labels.items()))
        if self.annotations:
            shown["annotations"] = dict(sorted(self.annotations.items()))
        return json.dumps(shown, separators=(",", ":"))


NONE = RoleMetadata({}, {})
NO_METADATA = NONE  # what a ReplicaSet outside any role carries


def _of(meta: PodTemplateMetadata | None) -> RoleMetadata:
    return NONE if meta is None else RoleMetadata(dict(meta.labels), dict(meta.annotations))


def role_metadata(ctx: RolloutContext) -> dict[str, RoleMetadata]:
    """ReplicaSet name -> the metadata its pods should carry; {} when none is configured."""
    strategy = ctx.rollout.spec.strategy
    if strategy.canary is not None:
        new_meta, stable_meta = strategy.canary.canary_metadata, strategy.canary.stable_metadata
    elif strategy.blue_green is not None:
        new_meta = strategy.blue_green.preview_metadata
        stable_meta = strategy.blue_green.active_metadata
    else:
        return {}
    if new_meta is None and stable_meta is None:
        return {}
    sets = ctx.sets
    wanted = {rs.name: NONE for rs in sets.others}
    rolled_out = not ctx.stable_hash or ctx.stable_hash == ctx.current_hash
    if sets.stable is not None and not rolled_out:
        wanted[sets.stable.name] = _of(stable_meta)
    if sets.new is not None:
        wanted[sets.new.name] = _of(stable_meta if rolled_out else new_meta)
    return wanted


def injected_metadata(rs_annotations: Mapping[str, Any]) -> RoleMetadata:
    """What the Rollout injected earlier into a ReplicaSet's pods (its annotation)."""
    try:
        found = json.loads(str(rs_annotations.get(EPHEMERAL_METADATA_ANNOTATION) or "{}"))
    except json.JSONDecodeError:
        return NONE  # unreadable: remove nothing we cannot name
    if not isinstance(found, dict):
        return NONE
    return RoleMetadata(_strings(found.get("labels")), _strings(found.get("annotations")))


def _strings(value: Any) -> dict[str, str]:
    if not isinstance(value, Mapping):
        return {}
    return {str(k): str(v) for k, v in value.items()}


def synced_metadata(
    meta: Mapping[str, Any], *, injected: RoleMetadata, wanted: RoleMetadata
) -> dict[str, Any] | None:
    """`meta` (an object's or a pod template's metadata) with `wanted` laid on and the keys
    of `injected` no longer wanted removed; None when nothing changes."""
    result = dict(meta)
    changed = False
    for field, want, had in (
        ("labels", wanted.labels, injected.labels),
        ("annotations", wanted.annotations, injected.annotations),
    ):
        current = dict(meta.get(field) or {})
        updated = {k: v for k, v in current.items() if k in want or k not in had}
        updated.update(want)
        if updated != current:
            result[field] = updated
            changed = True
    return result if changed else None
