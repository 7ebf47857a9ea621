"""Running single sync tasks against a `Cluster`: dry run, apply, replace, hook creation and
prune. Each returns a `TaskResult` (Argo CD's `syncResult.resources[]` entry) and never
raises a cluster error: a failed task is a result the executor judges."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from headway.cluster.errors import ClusterError, NotFound
from headway.cluster.protocol import Cluster, FieldValidation, PropagationPolicy
from headway.controllers import exit_points
from headway.controllers.app.rollout_owned import is_owned
from headway.diff import CompiledRule, apply_ignore_rules_to_desired
from headway.model.obj import Obj
from headway.sync.comparison import owner_of
from headway.sync.options import PropagationPolicy as OptionPolicy
from headway.sync.resources import ResourceKey
from headway.sync.rollout_selectors import keep_rollout_selector
from headway.sync.tasks import Disposition, SyncTask

__all__ = [
    "FIELD_MANAGER",
    "OPERATION_ANNOTATION",
    "StatusReplacing",
    "TaskResult",
    "TaskRunner",
    "api_version_of",
]

# Server-side apply with this field manager is how Headway always applies (see
# docs/applications.md): `ServerSideApply=true` therefore changes nothing here.
FIELD_MANAGER = "headway-application-controller"
# Stamped on every hook an operation creates, so a resumed operation recognises its own hooks
# and never deletes and re-runs one that already ran.
OPERATION_ANNOTATION = "headway.dev/sync-operation"

Refuse = Callable[[Mapping[str, Any]], str | None]

_PROPAGATION: Mapping[OptionPolicy, PropagationPolicy] = {
    OptionPolicy.FOREGROUND: "Foreground",
    OptionPolicy.BACKGROUND: "Background",
    OptionPolicy.ORPHAN: "Orphan",
}


@runtime_checkable
class StatusReplacing(Protocol):
    """A backend that can write an object and its status in one preconditioned write (a PUT
    on a kind without a status subresource), e.g. the local store."""

    def update(self, obj: Obj, *, field_manager: str = ..., with_status: bool = ...) -> Obj: ...


@dataclass(frozen=True)
class TaskResult:
    key: ResourceKey
    version: str
    status: str  # Synced, SyncFailed, Pruned, PruneSkipped
    message: str
    sync_phase: str
    hook_type: str = ""

    @property
    def failed(self) -> bool:
        return self.status == "SyncFailed"

    def to_status(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "group": self.key.group,
            "version": self.version,
            "kind": self.key.kind,
            "namespace": self.key.namespace,
            "name": self.key.name,
            "status": self.status,
            "message": self.message,
            "syncPhase": self.sync_phase,
        }
        if self.hook_type:
            out["hookType"] = self.hook_type
            out["hookPhase"] = "Running"
        return out


def api_version_of(task: SyncTask) -> str:
    obj = task.target if task.target is not None else task.live
    return str((obj or {}).get("apiVersion", ""))


class TaskRunner:
    """Runs tasks for one operation of one app."""

    def __init__(
        self,
        cluster: Cluster,
        *,
        app: str,
        operation_id: str,
        rules: Sequence[CompiledRule] = (),
        refuse: Refuse | None = None,
    ) -> None:
        self._cluster = cluster
        self._app = app
        self._operation_id = operation_id
        self._rules = rules
        self._owned = [rule for rule in rules if is_owned(rule)]
        self._refuse = refuse

    def _result(self, task: SyncTask, status: str, message: str) -> TaskResult:
        version = api_version_of(task).rpartition("/")[2]
        hook_type = str(task.phase) if task.is_hook else ""
        return TaskResult(task.key, version, status, message, str(task.phase), hook_type)

    def _refusal(self, obj: Mapping[str, Any] | None) -> str | None:
        """Why the project forbids writing (or deleting) `obj`. Asked before every write,
        not only in the dry run, which some tasks skip (SkipDryRunOnMissingResource)."""
        if obj is None or self._refuse is None:
            return None
        return self._refuse(obj)

    def dry_run(self, task: SyncTask) -> str | None:
        """The error a dry-run apply of the task's object reports, if any."""
        refusal = self._refusal(task.target)
        if refusal is not None:
            return f"{task.key}: {refusal}"
        if task.target is None or task.skip_dry_run:
            return None
        try:
            self._cluster.apply(
                dict(task.target), field_manager=FIELD_MANAGER, force=True, dry_run=True,
                field_validation=_field_validation(task),
            )
        except ClusterError as err:
            return f"{task.key}: {err}"
        return None

    def apply(self, task: SyncTask) -> TaskResult:
        assert task.target is not None
        shared = self._shared_refusal(task) or self._refusal(task.target)
        if shared is not None:
            return self._result(task, "SyncFailed", shared)
        target = dict(task.target)
        if task.options.respect_ignore_differences:
            target = apply_ignore_rules_to_desired(target, task.live, self._rules)
        elif self._owned:  # the router fields a Rollout writes, whatever the sync options say
            target = apply_ignore_rules_to_desired(target, task.live, self._owned)
        target = keep_rollout_selector(target, task.live)
        try:
            if task.options.replace and task.live is not None:
                message = self._replace(target, task.live)
            else:
                self._cluster.apply(target, field_manager=FIELD_MANAGER, force=True,
                                    field_validation=_field_validation(task))
                message = f"{task.key.kind.lower()}/{task.key.name} " + (
                    "configured" if task.live is not None else "created"
                )
        except ClusterError as err:
            return self._result(task, "SyncFailed", str(err))
        return self._result(task, "Synced", message)

    def _shared_refusal(self, task: SyncTask) -> str | None:
        owner = owner_of(task.live) if task.live is not None else None
        if task.options.fail_on_shared_resource and owner is not None and owner != self._app:
            return f"{task.key.qualified} is already managed by application {owner}"
        return None

    def _replace(self, target: Obj, live: Mapping[str, Any]) -> str:
        meta = {**target.get("metadata", {})}
        meta["resourceVersion"] = (live.get("metadata") or {}).get("resourceVersion")
        self._cluster.update({**target, "metadata": meta}, field_manager=FIELD_MANAGER)
        return f"{target['kind'].lower()}/{meta['name']} replaced"

    def create_hook(self, task: SyncTask) -> TaskResult | None:
        """Create the hook, unless this operation already did (a resumed step). Returns None
        when an old run of the hook is still being deleted (try again later)."""
        assert task.target is not None
        refusal = self._refusal(task.target)
        if refusal is not None:
            return self._result(task, "SyncFailed", refusal)
        live = task.live
        if live is not None and _operation_of(live) == self._operation_id:
            return self._result(task, "Synced", "hook already created by this operation")
        if live is not None and task.delete_before_create:
            self._delete(task.key, api_version_of(task), "Background")
            if self._exists(task.key, api_version_of(task)):
                return None
        meta = dict(task.target.get("metadata") or {})
        meta["annotations"] = {
            **(meta.get("annotations") or {}),
            OPERATION_ANNOTATION: self._operation_id,
        }
        try:
            self._cluster.apply(
                {**task.target, "metadata": meta}, field_manager=FIELD_MANAGER, force=True
            )
        except ClusterError as err:
            return self._result(task, "SyncFailed", str(err))
        exit_points.reached("hook-created")  # created, not yet in the operation state
        return self._result(task, "Synced", f"{task.key.kind.lower()}/{task.key.name} created")

    def prune(self, task: SyncTask) -> TaskResult:
        if task.disposition in (Disposition.PRUNE_DISABLED, Disposition.PRUNE_NOT_REQUESTED):
            return self._result(task, "PruneSkipped", str(task.disposition))
        if task.disposition is Disposition.AWAITING_CONFIRMATION:
            return self._result(task, "PruneSkipped", str(task.disposition))
        refusal = self._refusal(task.live)
        if refusal is not None:
            return self._result(task, "SyncFailed", refusal)
        policy = _PROPAGATION[task.options.prune_propagation_policy]
        try:
            self._delete(task.key, api_version_of(task), policy)
        except ClusterError as err:
            return self._result(task, "SyncFailed", str(err))
        return self._result(task, "Pruned", "pruned")

    def delete_live(self, key: ResourceKey, api_version: str) -> None:
        self._delete(key, api_version, "Background")

    def _delete(self, key: ResourceKey, api_version: str, policy: PropagationPolicy) -> None:
        try:
            self._cluster.delete(
                api_version, key.kind, key.name, key.namespace or None, propagation_policy=policy
            )
        except NotFound:
            return

    def _exists(self, key: ResourceKey, api_version: str) -> bool:
        try:
            self._cluster.get(api_version, key.kind, key.name, key.namespace or None)
        except NotFound:
            return False
        return True


def _operation_of(obj: Mapping[str, Any]) -> str | None:
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    value = annotations.get(OPERATION_ANNOTATION)
    return str(value) if value is not None else None


def _field_validation(task: SyncTask) -> FieldValidation:
    """Argo CD applies with kubectl's validation unless the sync option `Validate=false`
    asks it not to (`kubectl apply --validate=false`: unknown fields are dropped)."""
    return "Strict" if task.options.validate else "Ignore"
