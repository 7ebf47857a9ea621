"""The result of planning: ordered tasks, and the (phase, wave) steps the executor runs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from headway.sync.hooks import SyncPhase
from headway.sync.resources import ResourceKey
from headway.sync.tasks import Disposition, SyncTask

__all__ = ["SyncPlan", "WaveStep"]


@dataclass(frozen=True)
class WaveStep:
    """One (phase, wave): the executor prunes first, then deletes hooks marked
    BeforeHookCreation, then applies and creates hooks; the next step waits for the gate."""

    phase: SyncPhase
    wave: int
    tasks: tuple[SyncTask, ...]

    @property
    def prunes(self) -> tuple[SyncTask, ...]:
        return tuple(t for t in self.tasks if t.is_prune)

    @property
    def applies(self) -> tuple[SyncTask, ...]:
        return tuple(t for t in self.tasks if not t.is_prune)

    def __str__(self) -> str:
        return f"{self.phase} wave {self.wave}"


@dataclass(frozen=True)
class SyncPlan:
    tasks: tuple[SyncTask, ...]
    problems: tuple[str, ...] = ()
    # FailOnSharedResource=true and these resources belong to another application.
    shared_resources: tuple[str, ...] = ()

    @property
    def refusal(self) -> str | None:
        """Why the operation must fail before applying anything, if it must."""
        if self.shared_resources:
            return "Shared resource found: " + ", ".join(self.shared_resources)
        return None

    def waves(self) -> tuple[WaveStep, ...]:
        """The steps of a normal run, in order; SyncFail hooks and in-sync resources skipped
        by ApplyOutOfSyncOnly are not part of it."""
        return _group(
            t
            for t in self.tasks
            if t.phase is not SyncPhase.SYNC_FAIL and t.disposition is not Disposition.IN_SYNC
        )

    def failure_waves(self) -> tuple[WaveStep, ...]:
        """The SyncFail hooks, run only after the operation failed."""
        return _group(t for t in self.tasks if t.phase is SyncPhase.SYNC_FAIL)

    def step_of(self, key: ResourceKey) -> WaveStep | None:
        """The first step that applies `key`, if any."""
        for step in self.waves():
            if any(t.key == key and not t.is_prune for t in step.tasks):
                return step
        return None

    @property
    def awaiting_confirmation(self) -> tuple[SyncTask, ...]:
        return tuple(t for t in self.tasks if t.disposition is Disposition.AWAITING_CONFIRMATION)

    def confirmation_message(self) -> str | None:
        """Argo CD's wording: `Waiting for pruning confirmation of v1/ConfigMap/a and 2 more
        resources`."""
        waiting = self.awaiting_confirmation
        if not waiting:
            return None
        first = waiting[0]
        obj = first.live or {}
        named = f"{obj.get('apiVersion', '')}/{first.key.kind}/{first.key.name}"
        more = f" and {len(waiting) - 1} more resources" if len(waiting) > 1 else ""
        return f"Waiting for pruning confirmation of {named}{more}"


def _group(tasks: Any) -> tuple[WaveStep, ...]:
    steps: list[WaveStep] = []
    for task in tasks:
        if steps and (steps[-1].phase, steps[-1].wave) == (task.phase, task.wave):
            steps[-1] = WaveStep(task.phase, task.wave, (*steps[-1].tasks, task))
        else:
            steps.append(WaveStep(task.phase, task.wave, (task,)))
    return tuple(steps)
