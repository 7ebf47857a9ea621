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

from headway.sync.resources import annotation_values

__all__ = [
    "SYNC_OPTIONS_ANNOTATION",
    "ConfirmableSwitch",
    "ParsedOptions",
    "PropagationPolicy",
    "SyncOptions",
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
    lowered = value.lower()
    if lowered not in ("true", "false"):
        raise ValueError("expected true or false")
    return lowered == "true"


def _switch(value: str) -> ConfirmableSwitch:
    try:
        return ConfirmableSwitch(value.lower())
    except ValueError:
        raise ValueError("expected true, false or confirm") from None


def _policy(value: str) -> PropagationPolicy:
    try:
        return PropagationPolicy(value.lower())
    except ValueError:
        raise ValueError("expected foreground, background or orphan") from None


_FIELDS: Mapping[str, tuple[str, Callable[[str], Any]]] = {
    "Prune": ("prune", _switch),
    "Delete": ("delete", _switch),
    "Validate": ("validate", _boolean),
    "SkipDryRunOnMissingResource": ("skip_dry_run_on_missing_resource", _boolean),
    "ApplyOutOfSyncOnly": ("apply_out_of_sync_only", _boolean),
    "PrunePropagationPolicy": ("prune_propagation_policy", _policy),
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
    """Apply `Key=Value` items over `base` (defaults when None), later items winning."""
    options = base or SyncOptions()
    problems: list[str] = []
    for item in items:
        key, sep, value = item.strip().partition("=")
        if key not in _FIELDS:
            problems.append(f"{source}: unknown sync option {item.strip()!r}")
            continue
        attribute, parse = _FIELDS[key]
        try:
            if not sep:
                raise ValueError("expected Key=Value")
            options = replace(options, **{attribute: parse(value.strip())})
        except ValueError as err:
            problems.append(f"{source}: {item.strip()!r}: {err}")
    return ParsedOptions(options, tuple(problems))


def resource_options(
    app_options: SyncOptions, obj: Mapping[str, Any] | None, *, source: str = ""
) -> ParsedOptions:
    """The options in force for one resource: the Application's, overridden by the
    resource's own `argocd.argoproj.io/sync-options` annotation."""
    items = annotation_values(obj, SYNC_OPTIONS_ANNOTATION)
    where = source or f"annotation {SYNC_OPTIONS_ANNOTATION}"
    return parse_option_items(items, base=app_options, source=where)
