"""The sync HEAD would start on a cluster that holds BASE: its steps, hooks and prunes.
Purely computational.

The plan comes from the same planner a sync operation uses (`headway.sync.planner`), with
BASE's render standing in for the live objects. So the preview shows the order a real sync
would take - PreSync hooks, each (phase, wave) with what it applies, PostSync hooks - and
which resources it would delete, or keep because of `Prune=false` or wait on for
`Prune=confirm`.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from headway.diff.app_diff import ObjectKey
from headway.model.application import Application
from headway.model.obj import Obj
from headway.sync.options import options_from_policy
from headway.sync.plan import WaveStep
from headway.sync.planner import plan_sync
from headway.sync.resources import ResourceKey, is_namespaced
from headway.sync.tasks import Disposition, SyncTask

__all__ = ["StepPreview", "SyncPreview", "preview_sync"]

# generateName hooks are named from the operation's start; any fixed instant names them.
_PREVIEW_START = datetime(1970, 1, 1, tzinfo=UTC)
_PRUNE_WORDS = {
    Disposition.RUN: "deleted",
    Disposition.PRUNE_DISABLED: "kept (Prune=false)",
    Disposition.AWAITING_CONFIRMATION: "waits for confirmation (Prune=confirm)",
    Disposition.PRUNE_NOT_REQUESTED: "kept (the sync does not prune)",
}


@dataclass(frozen=True)
class StepPreview:
    """One (phase, wave) of the sync: hooks it runs, resources it changes, how many it
    re-applies unchanged, and prunes with what happens to each."""

    phase: str
    wave: int
    hooks: tuple[str, ...]
    applies: tuple[str, ...]
    unchanged: int
    prunes: tuple[str, ...]

    @property
    def title(self) -> str:
        return f"{self.phase} wave {self.wave}"


@dataclass(frozen=True)
class SyncPreview:
    steps: tuple[StepPreview, ...]
    problems: tuple[str, ...] = ()
    # Set when auto-sync is on but does not prune: prunes then wait for a manual sync.
    auto_sync_keeps_removed: bool = False

    @property
    def pruned(self) -> tuple[str, ...]:
        return tuple(p for s in self.steps for p in s.prunes)


def preview_sync(
    base: Sequence[Obj],
    head: Sequence[Obj],
    *,
    app: Application | None,
    namespace: str,
    changed: Collection[ObjectKey],
) -> SyncPreview:
    """The steps of a sync from `base` to `head`; `changed` names the resources that differ
    (an apply of anything else changes nothing)."""
    policy = app.spec.sync_policy if app is not None else None
    parsed = options_from_policy(policy)
    try:
        plan = plan_sync(
            head,
            base,
            options=parsed.options,
            namespace=namespace,
            revision="HEAD",
            started_at=_PREVIEW_START,
            app_name=app.name if app is not None else "",
        )
    except ValueError as err:
        return SyncPreview((), (str(err),))
    touched = {_resource_key(k) for k in changed}
    steps = tuple(_step(step, touched) for step in plan.waves())
    automated = policy.automated if policy is not None else None
    keeps = automated is not None and automated.enabled and not automated.prune
    has_prunes = any(s.prunes for s in steps)
    return SyncPreview(steps, (*parsed.problems, *plan.problems), keeps and has_prunes)


def _resource_key(key: ObjectKey) -> ResourceKey:
    group, kind, namespace, name = key
    return ResourceKey(group, kind, namespace if is_namespaced(group, kind) else "", name)


def _step(step: WaveStep, touched: set[ResourceKey]) -> StepPreview:
    hooks = tuple(_hook_label(t) for t in step.tasks if t.is_hook)
    applies = [t for t in step.applies if not t.is_hook]
    changed = tuple(t.key.qualified for t in applies if t.key in touched)
    prunes = tuple(f"{t.key.qualified}: {_PRUNE_WORDS[t.disposition]}" for t in step.prunes)
    return StepPreview(
        phase=str(step.phase),
        wave=step.wave,
        hooks=hooks,
        applies=changed,
        unchanged=len(applies) - len(changed),
        prunes=prunes,
    )


def _hook_label(task: SyncTask) -> str:
    """A hook by its manifest name; `generateName` hooks as `Job/migrate-*`."""
    meta = (task.target or {}).get("metadata") or {}
    generated = meta.get("generateName")
    if generated:
        return f"{task.key.kind}/{generated}*"
    return task.key.qualified
