"""The sync operation's state as typed values: `OperationState` and its parts, frozen.

The state is persisted as the Application's `status.operationState` in Argo CD's shape, plus
Headway's own fields (`operationId`, `dryRunDone`, `syncFailHooksRun` and the `wave` cursor).
`OperationState.from_dict` reads what any version of Headway wrote, and `to_dict` writes the
same shape back (fields it does not know are kept as they were), so a controller killed
mid-operation and restarted with this code resumes where the last one stopped. A field that
cannot be read raises `OperationStateError` naming it. Purely computational.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, TypeVar

from headway.sync.hooks import SyncPhase
from headway.sync.resources import ResourceKey

__all__ = [
    "OperationPhase",
    "OperationState",
    "OperationStateError",
    "ResourceResult",
    "SyncRequest",
    "SyncResult",
    "WaveCursor",
    "pinned_request",
]

FIELD = "status.operationState"
_E = TypeVar("_E", bound=StrEnum)


class OperationStateError(ValueError):
    """A persisted operation state with a field that cannot be read."""


class OperationPhase(StrEnum):
    RUNNING = "Running"
    TERMINATING = "Terminating"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"
    ERROR = "Error"

    @property
    def finished(self) -> bool:
        return self in (OperationPhase.SUCCEEDED, OperationPhase.FAILED, OperationPhase.ERROR)


def _enum(kind: type[_E], value: object, where: str) -> _E:
    try:
        return kind(str(value))
    except ValueError:
        allowed = ", ".join(m.value for m in kind)
        raise OperationStateError(f"{FIELD}.{where}: {value!r} is not one of {allowed}") from None


def _int(value: object, where: str) -> int:
    try:
        return int(str(value))
    except ValueError:
        raise OperationStateError(f"{FIELD}.{where}: {value!r} is not a whole number") from None


def _mapping(value: object, where: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise OperationStateError(f"{FIELD}.{where}: expected an object, not {value!r}")
    return value


@dataclass(frozen=True)
class WaveCursor:
    """Headway's cursor (`wave`): the (phase, wave) step reached, whether it was applied and
    whether its gate passed."""

    phase: SyncPhase
    wave: int
    applied: bool = False
    passed: bool = False

    @property
    def position(self) -> tuple[int, int]:
        return self.phase.order, self.wave

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"phase": str(self.phase), "wave": self.wave}
        out["applied"] = self.applied
        if self.passed:
            out["passed"] = True
        return out

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> WaveCursor:
        return cls(
            phase=_enum(SyncPhase, raw.get("phase"), "wave.phase"),
            wave=_int(raw.get("wave"), "wave.wave"),
            applied=bool(raw.get("applied")),
            passed=bool(raw.get("passed")),
        )


_RESULT_KEYS = frozenset(
    {"group", "version", "kind", "namespace", "name", "status", "message"}
    | {"syncPhase", "hookType", "hookPhase"}
)


@dataclass(frozen=True)
class ResourceResult:
    """One entry of `syncResult.resources`: what a task did to one object in one phase, and
    for a hook, the hook's phase (Running, Succeeded, Failed, Terminated)."""

    group: str
    version: str
    kind: str
    namespace: str
    name: str
    status: str  # Synced, SyncFailed, Pruned, PruneSkipped
    message: str
    sync_phase: str
    hook_type: str = ""
    hook_phase: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> ResourceKey:
        return ResourceKey(self.group, self.kind, self.namespace, self.name)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def identity(self) -> tuple[str, str, str, str, str]:
        """One entry per object and sync phase: a later result replaces an earlier one."""
        return (self.group, self.kind, self.namespace, self.name, self.sync_phase)

    @property
    def failed(self) -> bool:
        return self.status == "SyncFailed"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "group": self.group,
            "version": self.version,
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
            "status": self.status,
            "message": self.message,
            "syncPhase": self.sync_phase,
        }
        if self.hook_type:
            out["hookType"] = self.hook_type
        if self.hook_phase:
            out["hookPhase"] = self.hook_phase
        if self.extra:
            out.update(self.extra)
        return out

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> ResourceResult:
        get = raw.get
        return cls(
            group=str(get("group", "")),
            version=str(get("version", "")),
            kind=str(get("kind", "")),
            namespace=str(get("namespace", "")),
            name=str(get("name", "")),
            status=str(get("status", "")),
            message=str(get("message", "")),
            sync_phase=str(get("syncPhase", "")),
            hook_type=str(get("hookType") or ""),
            hook_phase=str(get("hookPhase") or ""),
            extra={}
            if raw.keys() <= _RESULT_KEYS
            else {k: v for k, v in raw.items() if k not in _RESULT_KEYS},
        )


@dataclass(frozen=True)
class SyncResult:
    """`syncResult`: the revisions the operation is pinned to and what each task did."""

    revision: str = ""
    revisions: tuple[str, ...] | None = None
    resources: tuple[ResourceResult, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {**self.extra, "revision": self.revision}
        if self.revisions is not None:
            out["revisions"] = list(self.revisions)
        out["resources"] = [r.to_dict() for r in self.resources]
        return out

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> SyncResult:
        revisions = raw.get("revisions")
        entries = raw.get("resources") or []
        return cls(
            revision=str(raw.get("revision") or ""),
            revisions=None if revisions is None else tuple(str(r) for r in revisions),
            resources=tuple(
                ResourceResult.from_dict(_mapping(e, f"syncResult.resources[{i}]"))
                for i, e in enumerate(entries)
            ),
            extra={k: v for k, v in raw.items() if k not in ("revision", "revisions", "resources")},
        )

    def merged(self, results: Iterable[ResourceResult]) -> SyncResult:
        """These results merged in, one entry per object and phase (a replaced entry keeps its
        place); a re-created hook keeps the hook phase already recorded for it."""
        entries = {r.identity: r for r in self.resources}
        for result in results:
            old = entries.get(result.identity)
            kept = old is not None and old.hook_phase and result.hook_type
            entries[result.identity] = (
                replace(result, hook_phase=old.hook_phase) if old and kept else result
            )
        return replace(self, resources=tuple(entries.values()))

    def with_hook_phases(self, phases: Mapping[ResourceKey, str]) -> SyncResult:
        """Hook entries of these objects moved to these phases."""
        resources = tuple(
            replace(r, hook_phase=phases[r.key]) if r.hook_type and r.key in phases else r
            for r in self.resources
        )
        return replace(self, resources=resources)


@dataclass(frozen=True)
class SyncRequest:
    """The parts of `operation.sync` the executor acts on."""

    prune: bool = False
    dry_run: bool = False
    revision: str = ""
    selected: frozenset[tuple[str, str, str]] = frozenset()  # (group, kind, name)
    self_heal_attempts: int = 0
    sync_options: tuple[str, ...] = ()

    @classmethod
    def from_operation(cls, operation: Mapping[str, Any]) -> SyncRequest:
        sync = _mapping(operation.get("sync"), "operation.sync")
        return cls(
            prune=bool(sync.get("prune")),
            dry_run=bool(sync.get("dryRun")),
            revision=str(sync.get("revision") or ""),
            selected=frozenset(
                (str(r.get("group") or ""), str(r.get("kind") or ""), str(r.get("name") or ""))
                for r in sync.get("resources") or []
            ),
            sync_options=tuple(str(o) for o in sync.get("syncOptions") or []),
            self_heal_attempts=_int(
                sync.get("selfHealAttemptsCount") or 0, "selfHealAttemptsCount"
            ),
        )


_KNOWN = (
    "operation",
    "phase",
    "message",
    "startedAt",
    "operationId",
    "retryCount",
    "syncResult",
    "dryRunDone",
    "syncFailHooksRun",
    "wave",
    "finishedAt",
    "retryAt",
)


@dataclass(frozen=True)
class OperationState:
    """`status.operationState`. Optional fields are None when the stored state has none;
    `started_at` is "" then (the executor refuses to plan without it)."""

    operation: Mapping[str, Any]
    phase: OperationPhase
    started_at: str
    message: str = ""
    operation_id: str | None = None
    retry_count: int | None = None
    sync_result: SyncResult | None = None
    dry_run_done: bool = False
    sync_fail_hooks_run: bool = False
    wave: WaveCursor | None = None
    finished_at: str | None = None
    retry_at: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def request(self) -> SyncRequest:
        return SyncRequest.from_operation(self.operation)

    @property
    def automated(self) -> bool:
        """Started by the automated sync policy rather than by a user."""
        return bool(
            _mapping(self.operation.get("initiatedBy"), "operation.initiatedBy").get("automated")
        )

    @property
    def hook_mark(self) -> str:
        """What marks the hooks this operation creates (older states have no operationId)."""
        return self.operation_id or self.started_at

    @property
    def resources(self) -> Sequence[ResourceResult]:
        return self.sync_result.resources if self.sync_result is not None else ()

    @property
    def pinned_revisions(self) -> list[str]:
        """The revisions the operation syncs to ([""] before its first step resolved them)."""
        result = self.sync_result or SyncResult()
        return list(result.revisions) if result.revisions else [result.revision]

    def pinned_to(self, revisions: Sequence[str]) -> OperationState:
        """The operation (request and result) pinned to these revisions."""
        if not revisions:
            return self
        result = replace(
            self.sync_result or SyncResult(), revision=revisions[0], revisions=tuple(revisions)
        )
        operation = {**self.operation, "sync": pinned_request(self.operation, revisions)}
        return replace(self, operation=operation, sync_result=result)

    def recorded(self, results: Iterable[ResourceResult]) -> OperationState:
        merged = (self.sync_result or SyncResult()).merged(results)
        return replace(self, sync_result=merged)

    def with_hook_phases(self, phases: Mapping[ResourceKey, str]) -> OperationState:
        if self.sync_result is None:
            return self
        return replace(self, sync_result=self.sync_result.with_hook_phases(phases))

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {**self.extra, "operation": dict(self.operation)}
        out.update(phase=str(self.phase), message=self.message)
        if self.started_at:
            out["startedAt"] = self.started_at
        optional = {
            "operationId": self.operation_id,
            "retryCount": self.retry_count,
            "syncResult": self.sync_result.to_dict() if self.sync_result else None,
            "dryRunDone": True if self.dry_run_done else None,
            "syncFailHooksRun": True if self.sync_fail_hooks_run else None,
            "wave": self.wave.to_dict() if self.wave else None,
            "finishedAt": self.finished_at,
            "retryAt": self.retry_at,
        }
        out.update({k: v for k, v in optional.items() if v is not None})
        return out

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> OperationState:
        result, wave = raw.get("syncResult"), raw.get("wave")
        return cls(
            operation=_mapping(raw.get("operation"), "operation"),
            phase=_enum(OperationPhase, raw.get("phase"), "phase"),
            started_at=str(raw.get("startedAt") or ""),
            message=str(raw.get("message") or ""),
            operation_id=_optional_str(raw.get("operationId")),
            retry_count=None
            if raw.get("retryCount") is None
            else _int(raw["retryCount"], "retryCount"),
            sync_result=None
            if result is None
            else SyncResult.from_dict(_mapping(result, "syncResult")),
            dry_run_done=bool(raw.get("dryRunDone")),
            sync_fail_hooks_run=bool(raw.get("syncFailHooksRun")),
            wave=WaveCursor.from_dict(_mapping(wave, "wave")) if wave else None,
            finished_at=_optional_str(raw.get("finishedAt")),
            retry_at=_optional_str(raw.get("retryAt")),
            extra={k: v for k, v in raw.items() if k not in _KNOWN},
        )


def pinned_request(operation: Mapping[str, Any], revisions: Sequence[str]) -> dict[str, Any]:
    """`operation.sync` naming these revisions (`revisions` only for several sources)."""
    sync = dict(_mapping(operation.get("sync"), "operation.sync"))
    sync["revision"] = revisions[0]
    if len(revisions) > 1:
        sync["revisions"] = list(revisions)
    return sync


def _optional_str(value: object) -> str | None:
    return None if value is None else str(value)
