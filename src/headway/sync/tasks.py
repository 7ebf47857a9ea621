"""Sync tasks: one apply, prune or hook step of a sync operation."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from headway.sync.hooks import DeletePolicy, SyncPhase
from headway.sync.options import SyncOptions
from headway.sync.resources import ResourceKey
from headway.sync.waves import kind_rank

__all__ = ["Action", "Disposition", "SyncTask"]


class Action(StrEnum):
    APPLY = "apply"
    PRUNE = "prune"
    HOOK = "hook"


class Disposition(StrEnum):
    """What the executor does with a task."""

    RUN = "run"
    # Prune=false on the live object: reported as PruneSkipped "ignored (no prune)".
    PRUNE_DISABLED = "ignored (no prune)"
    # The operation does not prune (manual sync without prune, automated without prune).
    PRUNE_NOT_REQUESTED = "ignored (requires pruning)"
    # Prune=confirm: the whole wave waits until a user confirms the prune.
    AWAITING_CONFIRMATION = "waiting for pruning confirmation"
    # ApplyOutOfSyncOnly and the resource is already in sync.
    IN_SYNC = "skipped (already in sync)"


@dataclass(frozen=True)
class SyncTask:
    action: Action
    phase: SyncPhase
    wave: int
    key: ResourceKey
    target: Mapping[str, Any] | None
    live: Mapping[str, Any] | None
    options: SyncOptions
    disposition: Disposition = Disposition.RUN
    skip_dry_run: bool = False
    delete_policies: frozenset[DeletePolicy] = field(default_factory=frozenset)

    @property
    def runs(self) -> bool:
        return self.disposition is Disposition.RUN

    @property
    def is_hook(self) -> bool:
        return self.action is Action.HOOK

    @property
    def is_prune(self) -> bool:
        return self.action is Action.PRUNE

    @property
    def delete_before_create(self) -> bool:
        """A hook whose previous run is still live is deleted before it is created again."""
        return (
            self.is_hook
            and self.live is not None
            and DeletePolicy.BEFORE_HOOK_CREATION in self.delete_policies
        )

    def sort_key(self) -> tuple[int, int, int, str]:
        """Argo CD's order: phase, wave, kind rank, name."""
        return (self.phase.order, self.wave, kind_rank(self.key.kind), self.key.name)

    def __str__(self) -> str:
        return f"{self.phase}/{self.wave} {self.action} {self.key}"
