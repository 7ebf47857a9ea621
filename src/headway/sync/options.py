"""Sync options: the Application's `syncOptions` list and the per-resource annotation.

Both use `Key=Value` items; the annotation `argocd.argoproj.io/sync-options` holds them
comma-separated. A resource's annotation overrides the Application's value for that key.
Unknown keys and invalid values are reported, never silently dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from headway.model import syncoptions
from headway.model.application import SyncPolicy
from headway.sync.resources import annotation_values

__all__ = [
    "SYNC_OPTIONS_ANNOTATION",
    "ConfirmableSwitch",
    "ParsedOptions",
    "PropagationPolicy",
    "SyncOptions",
    "options_from_policy",
    "parse_option_items",
    "resource_options",
]

SYNC_OPTIONS_ANNOTATION = "argocd.argoproj.io/sync-options"


class ConfirmableSwitch(StrEnum):
    """Prune= and Delete= take true, false or confirm."""

    TRUE = "true"
    FALSE = "false"
    CONFIRM = "confirm"


class PropagationPolicy(StrEnum):
    FOREGROUND = "foreground"
    BACKGROUND = "background"
    ORPHAN = "orphan"


@dataclass(frozen=True)
class SyncOptions:
    """Every sync option Argo CD defines, with its default."""

    prune: ConfirmableSwitch = ConfirmableSwitch.TRUE
    delete: ConfirmableSwitch = ConfirmableSwitch.TRUE
    validate: bool = True
    skip_dry_run_on_missing_resource: bool = False
    apply_out_of_sync_only: bool = False
    prune_propagation_policy: PropagationPolicy = PropagationPolicy.FOREGROUND
    prune_last: bool = False
    replace: bool = False
    force: bool = False
    server_side_apply: bool = False
    client_side_apply_migration: bool = True
    fail_on_shared_resource: bool = False
    respect_ignore_differences: bool = False
    create_namespace: bool = False


@dataclass(frozen=True)
class ParsedOptions:
    options: SyncOptions
    problems: tuple[str, ...] = ()


def _boolean(value: str) -> bool:
    return value == "true"


_FIELDS: Mapping[str, tuple[str, Callable[[str], Any]]] = {
    "Prune": ("prune", ConfirmableSwitch),
    "Delete": ("delete", ConfirmableSwitch),
    "Validate": ("validate", _boolean),
    "SkipDryRunOnMissingResource": ("skip_dry_run_on_missing_resource", _boolean),
    "ApplyOutOfSyncOnly": ("apply_out_of_sync_only", _boolean),
    "PrunePropagationPolicy": ("prune_propagation_policy", PropagationPolicy),
    "PruneLast": ("prune_last", _boolean),
    "Replace": ("replace", _boolean),
    "Force": ("force", _boolean),
    "ServerSideApply": ("server_side_apply", _boolean),
    "ClientSideApplyMigration": ("client_side_apply_migration", _boolean),
    "FailOnSharedResource": ("fail_on_shared_resource", _boolean),
    "RespectIgnoreDifferences": ("respect_ignore_differences", _boolean),
    "CreateNamespace": ("create_namespace", _boolean),
}


def parse_option_items(
    items: Iterable[str], *, base: SyncOptions | None = None, source: str = "syncOptions"
) -> ParsedOptions:
    """Apply `Key=Value` items over `base` (defaults when None), later items winning.
    Keys and values are checked against `headway.model.syncoptions`, the one vocabulary."""
    options = base or SyncOptions()
    problems: list[str] = []
    for item in items:
        try:
            key, value = syncoptions.parse_sync_option(item)
        except syncoptions.SyncOptionError as err:
            problems.append(f"{source}: {err}")
            continue
        attribute, convert = _FIELDS[key]
        options = replace(options, **{attribute: convert(value)})
    return ParsedOptions(options, tuple(problems))


def options_from_policy(policy: SyncPolicy | None) -> ParsedOptions:
    """The Application's options from its (already parsed) `spec.syncPolicy`."""
    items = policy.sync_options if policy is not None else ()
    return parse_option_items(items, source="spec.syncPolicy.syncOptions")


def resource_options(
    app_options: SyncOptions, obj: Mapping[str, Any] | None, *, source: str = ""
) -> ParsedOptions:
    """The options in force for one resource: the Application's, overridden by the
    resource's own `argocd.argoproj.io/sync-options` annotation."""
    items = annotation_values(obj, SYNC_OPTIONS_ANNOTATION)
    where = source or f"annotation {SYNC_OPTIONS_ANNOTATION}"
    return parse_option_items(items, base=app_options, source=where)
