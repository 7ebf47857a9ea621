"""Ordering rules, each a small pure function over a task list.

The planner applies them in gitops-engine's order: prune waves are mirrored, PruneLast
prunes move after the last Sync wave, tasks are sorted by (phase, wave, kind, name), then
Namespaces and CRDs are pulled ahead of the first task that needs them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from headway.sync.hooks import SyncPhase
from headway.sync.tasks import SyncTask

__all__ = [
    "crd_group_kind",
    "crds_first",
    "mirror_prune_waves",
    "move_prune_last",
    "namespaces_first",
    "sort_tasks",
]


def mirror_prune_waves(tasks: Sequence[SyncTask]) -> list[SyncTask]:
    """Prunes run in reverse creation order: the distinct prune waves are swapped
    symmetrically (lowest with highest, and so on), so what was created last goes first."""
    waves = sorted({t.wave for t in tasks if t.is_prune})
    mirrored = dict(zip(waves, reversed(waves), strict=True))
    return [replace(t, wave=mirrored[t.wave]) if t.is_prune else t for t in tasks]


def move_prune_last(tasks: Sequence[SyncTask]) -> list[SyncTask]:
    """PruneLast prunes run in a wave of their own after the last Sync-phase wave."""
    last = max((t.wave for t in tasks if t.phase is SyncPhase.SYNC), default=0)
    last = max(last, 0) + 1
    return [replace(t, wave=last) if t.is_prune and t.options.prune_last else t for t in tasks]


def sort_tasks(tasks: Sequence[SyncTask]) -> list[SyncTask]:
    return sorted(tasks, key=SyncTask.sort_key)


def _bubble(
    tasks: Sequence[SyncTask],
    *,
    provides: Callable[[Mapping[str, Any]], str | None],
    needs: Callable[[SyncTask], str | None],
) -> list[SyncTask]:
    """Move each providing task right before the first task needing it, taking that task's
    phase and wave (gitops-engine's adjustDeps)."""
    out = list(tasks)
    first_need: dict[str, int] = {}
    for i in range(len(out)):
        task = out[i]
        if task.target is None:
            continue
        provided = provides(task.target)
        if provided is None:
            needed = needs(task)
            if needed is not None:
                first_need.setdefault(needed, i)
            continue
        at = first_need.get(provided)
        if at is not None:
            anchor = out[at]
            out[at + 1 : i + 1] = out[at:i]
            out[at] = replace(task, phase=anchor.phase, wave=anchor.wave)
            first_need = {k: v + 1 if v >= at else v for k, v in first_need.items()}
    return out


def _namespace_provided(obj: Mapping[str, Any]) -> str | None:
    if obj.get("kind") == "Namespace" and str(obj.get("apiVersion", "")) == "v1":
        return str((obj.get("metadata") or {}).get("name") or "")
    return None


def namespaces_first(tasks: Sequence[SyncTask]) -> list[SyncTask]:
    """A Namespace is created before the first resource in it."""
    return _bubble(
        tasks,
        provides=_namespace_provided,
        needs=lambda t: t.key.namespace or None,
    )


def crd_group_kind(obj: Mapping[str, Any]) -> str | None:
    """`group/Kind` that a CustomResourceDefinition defines, or None for other objects."""
    if obj.get("kind") != "CustomResourceDefinition":
        return None
    if not str(obj.get("apiVersion", "")).startswith("apiextensions.k8s.io/"):
        return None
    spec = obj.get("spec") or {}
    group, kind = spec.get("group"), (spec.get("names") or {}).get("kind")
    return f"{group}/{kind}" if group and kind else None


def crds_first(tasks: Sequence[SyncTask]) -> list[SyncTask]:
    """A CRD is created before the first custom resource of its kind."""
    return _bubble(
        tasks,
        provides=crd_group_kind,
        needs=lambda t: f"{t.key.group}/{t.key.kind}",
    )
