"""Resource hooks: Argo CD's `argocd.argoproj.io/hook*` annotations and Helm's, mapped the
way Argo CD maps them.

An Argo hook annotation wins over Helm's. Helm `pre-install`/`pre-upgrade` become PreSync,
`post-install`/`post-upgrade` PostSync, `pre-delete` PreDelete and `post-delete` PostDelete;
other Helm hooks (`test`, ...) mark the object as a hook with no sync phase, so it is left out
of the sync entirely, as in Argo CD. PreDelete and PostDelete hooks have no sync phase either:
they run when the Application is deleted (`sync.delete_hooks`).
`helm.sh/hook: crd-install` is not a hook. Without any delete policy a hook is deleted
before it is created again (BeforeHookCreation).
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from headway.model.obj import Obj
from headway.sync.resources import annotation, annotation_values

__all__ = [
    "HOOK_ANNOTATION",
    "HOOK_DELETE_POLICY_ANNOTATION",
    "DeletePolicy",
    "HookType",
    "SyncPhase",
    "delete_policies",
    "hook_name",
    "hook_types",
    "is_hook",
    "is_skipped",
    "sync_phases",
]

HOOK_ANNOTATION = "argocd.argoproj.io/hook"
HOOK_DELETE_POLICY_ANNOTATION = "argocd.argoproj.io/hook-delete-policy"
HELM_HOOK = "helm.sh/hook"
HELM_DELETE_POLICY = "helm.sh/hook-delete-policy"


class SyncPhase(StrEnum):
    PRE_SYNC = "PreSync"
    SYNC = "Sync"
    POST_SYNC = "PostSync"
    SYNC_FAIL = "SyncFail"

    @property
    def order(self) -> int:
        return _PHASE_ORDER[self]


_PHASE_ORDER = {
    SyncPhase.PRE_SYNC: -1,
    SyncPhase.SYNC: 0,
    SyncPhase.POST_SYNC: 1,
    SyncPhase.SYNC_FAIL: 2,
}


class HookType(StrEnum):
    PRE_SYNC = "PreSync"
    SYNC = "Sync"
    POST_SYNC = "PostSync"
    SYNC_FAIL = "SyncFail"
    SKIP = "Skip"
    PRE_DELETE = "PreDelete"
    POST_DELETE = "PostDelete"


class DeletePolicy(StrEnum):
    HOOK_SUCCEEDED = "HookSucceeded"
    HOOK_FAILED = "HookFailed"
    BEFORE_HOOK_CREATION = "BeforeHookCreation"


_HELM_TYPES = {
    "pre-install": HookType.PRE_SYNC,
    "pre-upgrade": HookType.PRE_SYNC,
    "post-install": HookType.POST_SYNC,
    "post-upgrade": HookType.POST_SYNC,
    "pre-delete": HookType.PRE_DELETE,
    "post-delete": HookType.POST_DELETE,
}
_HELM_POLICIES = {
    "before-hook-creation": DeletePolicy.BEFORE_HOOK_CREATION,
    "hook-succeeded": DeletePolicy.HOOK_SUCCEEDED,
    "hook-failed": DeletePolicy.HOOK_FAILED,
}


def hook_types(obj: Obj) -> tuple[HookType, ...]:
    """Argo hook types when the Argo annotation names any valid one, else mapped Helm ones."""
    if annotation(obj, HOOK_ANNOTATION) is None and annotation(obj, HELM_HOOK) is None:
        return ()  # most objects: asked for every resource of every comparison
    argo = tuple(HookType(v) for v in annotation_values(obj, HOOK_ANNOTATION) if v in _VALID)
    if argo:
        return argo
    helm = (_HELM_TYPES.get(v) for v in annotation_values(obj, HELM_HOOK))
    return tuple(dict.fromkeys(t for t in helm if t is not None))


_VALID = frozenset(t.value for t in HookType)


def is_skipped(obj: Obj) -> bool:
    """`hook: Skip` alone: neither applied nor run."""
    return hook_types(obj) == (HookType.SKIP,)


def is_hook(obj: Obj) -> bool:
    if annotation(obj, HOOK_ANNOTATION) is not None:
        return not is_skipped(obj)
    helm = annotation(obj, HELM_HOOK)
    return helm is not None and helm != "crd-install"


def sync_phases(obj: Obj) -> tuple[SyncPhase, ...]:
    """The phases an object runs in: none for skipped objects and for hooks without a sync
    phase (Helm test hooks, PreDelete, PostDelete); its hook phases for hooks; Sync otherwise."""
    if is_skipped(obj):
        return ()
    if not is_hook(obj):
        return (SyncPhase.SYNC,)
    phases = {SyncPhase(t.value) for t in hook_types(obj) if t.value in _PHASE_VALUES}
    return tuple(sorted(phases, key=lambda p: p.order))


_PHASE_VALUES = frozenset(p.value for p in SyncPhase)


def delete_policies(obj: Obj) -> frozenset[DeletePolicy]:
    argo = annotation_values(obj, HOOK_DELETE_POLICY_ANNOTATION)
    helm = annotation_values(obj, HELM_DELETE_POLICY)
    found = {DeletePolicy(v) for v in argo if v in _POLICY_VALUES}
    found |= {_HELM_POLICIES[v] for v in helm if v in _HELM_POLICIES}
    return frozenset(found or {DeletePolicy.BEFORE_HOOK_CREATION})


_POLICY_VALUES = frozenset(p.value for p in DeletePolicy)


def hook_name(obj: Obj, *, revision: str, phase: SyncPhase, started_at: datetime) -> str:
    """The hook's name: `metadata.name`, or for `generateName` hooks a name that is stable
    within one operation: `<generateName><revision[:7]>-<phase>-<start unix seconds>`,
    lower-cased (Argo CD's formula, so re-running a step finds the same object)."""
    meta = obj.get("metadata") or {}
    if meta.get("name"):
        return str(meta["name"])
    short = revision[:7] if len(revision) >= 8 else revision
    suffix = f"{short}-{phase.value}-{int(started_at.timestamp())}".lower()
    return f"{meta.get('generateName') or ''}{suffix}"
