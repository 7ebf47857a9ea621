"""Argo CD's per-resource annotations, checked on every object.

Argo CD reads these silently: a sync wave that is not an integer counts as wave 0, and an
unknown hook type, delete policy or sync option is ignored. Each of those turns a typo into a
changed rollout order or an unprotected resource, so validation reports them as errors. A
misspelt key (`argocd.argoproj.io/sync-option`) is ignored too; it is a warning naming the
nearest key, like an unknown field.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from typing import Any

from headway.model import schema as s
from headway.model import syncoptions

__all__ = [
    "COMPARE_OPTIONS_ANNOTATION",
    "DELETE_POLICIES",
    "HOOK_ANNOTATION",
    "HOOK_DELETE_POLICY_ANNOTATION",
    "HOOK_TYPES",
    "SKIP_RECONCILE_ANNOTATION",
    "SYNC_OPTIONS_ANNOTATION",
    "SYNC_WAVE_ANNOTATION",
    "annotation_options",
    "check_argocd_annotations",
    "ignores_extraneous",
    "skips_reconcile",
]

SYNC_WAVE_ANNOTATION = "argocd.argoproj.io/sync-wave"
SYNC_OPTIONS_ANNOTATION = "argocd.argoproj.io/sync-options"
HOOK_ANNOTATION = "argocd.argoproj.io/hook"
HOOK_DELETE_POLICY_ANNOTATION = "argocd.argoproj.io/hook-delete-policy"
SKIP_RECONCILE_ANNOTATION = "argocd.argoproj.io/skip-reconcile"
COMPARE_OPTIONS_ANNOTATION = "argocd.argoproj.io/compare-options"
# Go's strconv.ParseBool "true" spellings, which Argo CD reads the annotation with.
_GO_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
# `compare-options` items Argo CD reads (each exactly), and what Headway says of each: None
# when Headway does what Argo CD does, else a warning.
_NO_SERVER_SIDE_DIFF = (
    "Headway does not run a server-side diff (a dry-run apply through the API server's "
    "admission chain), so this has no effect: the manifest's fields are compared with the live "
    "object with Kubernetes' defaults filled in, a field a mutating webhook changed shows as a "
    "difference (as with IncludeMutationWebhook=true), and an admission error appears at "
    "sync, not in the diff (docs/diff.md)"
)
_COMPARE_OPTIONS: dict[str, str | None] = {
    "IgnoreExtraneous": None,
    "ServerSideDiff=true": _NO_SERVER_SIDE_DIFF,
    "ServerSideDiff=false": None,  # Headway's diff is never server-side
    "IncludeMutationWebhook=true": None,  # Headway's diff shows webhook changes anyway
    "IncludeMutationWebhook=false": None,
}
# Every `argocd.argoproj.io/` annotation (and label) Argo CD's own code reads or writes, so
# that one it does not know, which it ignores without a word, is named with the nearest.
_ARGO_CD_KEYS = frozenset(
    f"argocd.argoproj.io/{name}"
    for name in (
        "sync-wave", "sync-options", "hook", "hook-delete-policy", "hook-finalizer",
        "compare-options", "skip-reconcile", "refresh", "refresh-timestamp",
        "manifest-generate-paths", "tracking-id", "instance", "secret-type", "managed-by",
        "managed-by-url", "kubernetes-version", "installation-id", "ignore-healthcheck",
        "ignore-resource-updates", "ignore-restart-policy", "ignore-default-links",
        "deletion-approved", "hydrate", "hydrate-timestamp", "application-set-refresh",
        "auto-label-cluster-info", "client-side-apply-migration-manager",
    )
)  # fmt: skip
HOOK_TYPES = ("PreSync", "Sync", "PostSync", "SyncFail", "PreDelete", "PostDelete", "Skip")
DELETE_POLICIES = ("HookSucceeded", "HookFailed", "BeforeHookCreation")
_INTEGER = re.compile(r"\s*[+-]?\d+\s*")


def skips_reconcile(meta: Mapping[str, Any]) -> bool:
    """Whether an Application's `argocd.argoproj.io/skip-reconcile` asks the controller to
    leave it alone, as Argo CD reads it (Go's ParseBool; anything else does not skip)."""
    annotations = meta.get("annotations")
    if not isinstance(annotations, Mapping):
        return False
    return str(annotations.get(SKIP_RECONCILE_ANNOTATION, "")) in _GO_TRUE


def annotation_options(meta: Mapping[str, Any], key: str) -> frozenset[str]:
    """The comma-separated items of annotation `key`, trimmed, as Argo CD splits them."""
    annotations = meta.get("annotations")
    raw = annotations.get(key) if isinstance(annotations, Mapping) else None
    if not isinstance(raw, str):
        return frozenset()
    return frozenset(item.strip() for item in raw.split(",") if item.strip())


def ignores_extraneous(meta: Mapping[str, Any]) -> bool:
    """Whether a resource's `compare-options` holds `IgnoreExtraneous` (exactly: Argo CD
    looks for that item, so `IgnoreExtraneous=true` is not it)."""
    return "IgnoreExtraneous" in annotation_options(meta, COMPARE_OPTIONS_ANNOTATION)


def check_argocd_annotations(meta: Mapping[str, Any], path: s.Path, report: s.Reporter) -> None:
    """A metadata check: the Argo CD annotations present must mean what they say."""
    annotations = meta.get("annotations")
    if not isinstance(annotations, Mapping):
        return
    where = (*path, "annotations")
    for key in annotations:
        if isinstance(key, str) and key.startswith(_PREFIX) and key not in _ARGO_CD_KEYS:
            report.warning((*where, key), _unknown_key(key))
    wave = annotations.get(SYNC_WAVE_ANNOTATION)
    if isinstance(wave, str) and not _INTEGER.fullmatch(wave):
        message = f'"{wave}" is not an integer; Argo CD would silently use wave 0'
        report.error((*where, SYNC_WAVE_ANNOTATION), message)
    _check_list(annotations, SYNC_OPTIONS_ANNOTATION, where, report)
    _check_list(annotations, HOOK_ANNOTATION, where, report)
    _check_list(annotations, HOOK_DELETE_POLICY_ANNOTATION, where, report)
    for item in sorted(annotation_options(meta, COMPARE_OPTIONS_ANNOTATION)):
        _check_compare_option(item, (*where, COMPARE_OPTIONS_ANNOTATION), report)


_PREFIX = "argocd.argoproj.io/"


def _unknown_key(key: str) -> str:
    close = difflib.get_close_matches(key, sorted(_ARGO_CD_KEYS), n=1, cutoff=0.8)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return f"not an annotation Argo CD reads{hint}; Argo CD ignores it"


def _check_compare_option(item: str, where: s.Path, report: s.Reporter) -> None:
    if item not in _COMPARE_OPTIONS:
        known = ", ".join(_COMPARE_OPTIONS)
        report.error(where, f'"{item}" is not one of: {known}; Argo CD would silently ignore it')
        return
    warning = _COMPARE_OPTIONS[item]
    if warning is not None:
        report.warning(where, f"{item}: {warning}")


def _check_list(
    annotations: Mapping[str, Any], key: str, where: s.Path, report: s.Reporter
) -> None:
    raw = annotations.get(key)
    if not isinstance(raw, str):
        return
    for item in (part.strip() for part in raw.split(",")):
        if not item:
            continue
        problem = _problem(key, item)
        if problem:
            report.error((*where, key), problem)


def _problem(key: str, item: str) -> str | None:
    if key == SYNC_OPTIONS_ANNOTATION:
        try:
            syncoptions.parse_sync_option(item)
        except syncoptions.SyncOptionError as err:
            return str(err)
        return None
    allowed = HOOK_TYPES if key == HOOK_ANNOTATION else DELETE_POLICIES
    if item in allowed:
        return None
    return f'"{item}" is not one of: {", ".join(allowed)}'
