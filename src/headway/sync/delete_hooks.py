"""PreDelete and PostDelete hooks: what one step of an Application's deletion does about
them. Purely computational; the controller creates and deletes what the plan says
(`controllers.app.deletion`).

As in Argo CD, the hooks are the objects annotated `argocd.argoproj.io/hook: PreDelete` (or
`PostDelete`; Helm's `pre-delete`/`post-delete`) that the app's sources render now, at their
target revision, so a hook fixed in Git is the one that runs. Each is created once for this
deletion: PreDelete hooks before any of the app's resources is deleted, which waits for all
of them to be Healthy (a kind with no health check counts as Healthy, a Job once it
completed); PostDelete hooks once the resources are gone, and the Application goes after
they all succeeded.

The live object is the record of a run: a created hook carries the deletion it runs for
(`RUN_ANNOTATION`: the Application's deletionTimestamp) and a fingerprint of the manifest it
was created from. A step that finds its hook already created (a controller killed right after
creating it) waits for it instead of creating it again. A live hook left by something else (a
`PreSync,PreDelete` hook's sync run) is deleted first and created again for this deletion.

Deliberately unlike Argo CD, a failed hook is kept, not deleted and created again at once:
its status and its pods' logs say why it failed, and a teardown job that failed half-way is
not re-run in a loop. It runs again when Git renders a different manifest for it (the fix),
and the deletion goes on without it when Git no longer renders it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from headway.health import HealthResult, HealthStatus
from headway.model.obj import Obj
from headway.sync import hooks
from headway.sync.resources import ResourceKey, annotation

__all__ = [
    "FINGERPRINT_ANNOTATION",
    "RUN_ANNOTATION",
    "DeleteHookPlan",
    "hook_label",
    "plan_delete_hooks",
    "stamp_for_run",
]

RUN_ANNOTATION = "headway.dev/delete-hook-run"
FINGERPRINT_ANNOTATION = "headway.dev/delete-hook-fingerprint"

Assess = Callable[[Obj], HealthResult | None]
KeyOf = Callable[[Obj], ResourceKey]


@dataclass(frozen=True)
class DeleteHookPlan:
    """One step's decision. `create` holds the stamped objects to create, `delete` the live
    ones to delete first (an earlier run, or a failed run Git has since fixed); `running`
    and `failed` name the hooks waited for and the ones that failed, with health messages."""

    create: tuple[Obj, ...] = ()
    delete: tuple[Obj, ...] = ()
    running: tuple[str, ...] = ()
    failed: tuple[str, ...] = ()

    @property
    def done(self) -> bool:
        """Every hook of this deletion succeeded: the app's resources may be deleted."""
        return not (self.create or self.delete or self.running or self.failed)


def fingerprint(obj: Mapping[str, Any]) -> str:
    """A digest of the manifest a hook is created from (its stamps left out)."""
    meta = dict(obj.get("metadata") or {})
    notes = {k: v for k, v in (meta.get("annotations") or {}).items() if not _is_stamp(k)}
    body = {**obj, "metadata": {**meta, "annotations": notes}}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _is_stamp(key: str) -> bool:
    return key in (RUN_ANNOTATION, FINGERPRINT_ANNOTATION)


def run_id(deleted_at: datetime) -> str:
    return str(int(deleted_at.timestamp()))


def stamp_for_run(
    obj: Obj, *, deleted_at: datetime, hook_type: hooks.HookType = hooks.HookType.PRE_DELETE
) -> Obj:
    """The hook as created for the deletion that started at `deleted_at`: stamped with the
    run and its fingerprint; a `generateName` hook gets a name stable for that deletion
    (`<generateName>predelete-<unix seconds>`, or `postdelete-`), so a resumed step finds it."""
    meta = dict(obj.get("metadata") or {})
    if not meta.get("name"):
        prefix = meta.pop("generateName", "") or ""
        meta["name"] = f"{prefix}{hook_type.value.lower()}-{run_id(deleted_at)}"
    meta["annotations"] = {
        **(meta.get("annotations") or {}),
        RUN_ANNOTATION: run_id(deleted_at),
        FINGERPRINT_ANNOTATION: fingerprint(obj),
    }
    return {**obj, "metadata": meta}


def hook_label(key: ResourceKey) -> str:
    return "/".join(p for p in (key.group, key.kind, key.namespace, key.name) if p)


def plan_delete_hooks(
    rendered: Sequence[Obj],
    live: Mapping[ResourceKey, Obj],
    *,
    hook_type: hooks.HookType,
    deleted_at: datetime,
    key_of: KeyOf,
    assess: Assess,
) -> DeleteHookPlan:
    """The step for the hooks of `hook_type` (PreDelete or PostDelete) among `rendered` (the
    app's prepared desired objects) against `live` (its managed live objects), for the
    deletion that started at `deleted_at`."""
    plan = _Plan()
    for obj in rendered:
        if hook_type in hooks.hook_types(obj):
            hook = stamp_for_run(obj, deleted_at=deleted_at, hook_type=hook_type)
            key = key_of(hook)
            plan.decide(hook, live.get(key), label=hook_label(key), assess=assess)
    return DeleteHookPlan(
        tuple(plan.create), tuple(plan.delete), tuple(plan.running), tuple(plan.failed)
    )


@dataclass
class _Plan:
    create: list[Obj] = field(default_factory=list)
    delete: list[Obj] = field(default_factory=list)
    running: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)

    def decide(self, hook: Obj, current: Obj | None, *, label: str, assess: Assess) -> None:
        """One hook: create it, delete an earlier run (or a failed one Git has since
        changed), wait for it, or report it failed."""
        if current is None:
            self.create.append(hook)
        elif (current.get("metadata") or {}).get("deletionTimestamp"):
            self.running.append(f"{label} (an earlier run is being deleted)")
        elif annotation(current, RUN_ANNOTATION) != annotation(hook, RUN_ANNOTATION):
            self.delete.append(current)
        else:
            verdict = _verdict(current, assess)
            if verdict.status is HealthStatus.DEGRADED:
                if annotation(current, FINGERPRINT_ANNOTATION) != _fingerprint_of(hook):
                    self.delete.append(current)  # failed, and Git has a different one now
                else:
                    self.failed.append(f"{label}: {verdict.message or verdict.status}")
            elif verdict.status is not HealthStatus.HEALTHY:
                self.running.append(f"{label} ({verdict})")


def _fingerprint_of(stamped: Obj) -> str | None:
    return annotation(stamped, FINGERPRINT_ANNOTATION)


def _verdict(obj: Obj, assess: Assess) -> HealthResult:
    """Argo CD's reading: no health check for the kind means Healthy."""
    return assess(obj) or HealthResult(HealthStatus.HEALTHY)
