"""Argo CD sync options (`CreateNamespace=true`, `Prune=confirm`, ...): the known keys and values.

They appear in an Application's `spec.syncPolicy.syncOptions` list and, comma-separated, in a
resource's `argocd.argoproj.io/sync-options` annotation. Argo CD ignores an option it does not
recognise, so a typo (`ApplyOutOfSynOnly=true`) silently changes nothing; Headway reports it.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping

__all__ = ["SYNC_OPTION_VALUES", "SyncOptionError", "parse_sync_option", "parse_sync_options"]

_BOOL = ("true", "false")

# Key -> the values Argo CD gives a meaning to.
SYNC_OPTION_VALUES: Mapping[str, tuple[str, ...]] = {
    "Validate": _BOOL,
    "Prune": ("true", "false", "confirm"),
    "Delete": ("true", "false", "confirm"),
    "PruneLast": _BOOL,
    "PrunePropagationPolicy": ("foreground", "background", "orphan"),
    "Replace": _BOOL,
    "Force": _BOOL,
    "ServerSideApply": _BOOL,
    "ClientSideApplyMigration": _BOOL,
    "ApplyOutOfSyncOnly": _BOOL,
    "CreateNamespace": _BOOL,
    "RespectIgnoreDifferences": _BOOL,
    "FailOnSharedResource": _BOOL,
    "SkipDryRunOnMissingResource": _BOOL,
}


class SyncOptionError(ValueError):
    """An option that is not `Key=value` with a key and value Argo CD knows."""


def parse_sync_option(option: str) -> tuple[str, str]:
    """`"CreateNamespace=true"` -> `("CreateNamespace", "true")`, or a SyncOptionError."""
    key, sep, value = option.partition("=")
    key, value = key.strip(), value.strip()
    if not sep or not key:
        raise SyncOptionError(f'"{option}" is not a sync option (expected Key=value)')
    if key not in SYNC_OPTION_VALUES:
        close = difflib.get_close_matches(key, list(SYNC_OPTION_VALUES), n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise SyncOptionError(f'"{key}" is not a known sync option{hint}')
    allowed = SYNC_OPTION_VALUES[key]
    if value not in allowed:
        raise SyncOptionError(f'{key}="{value}" must be one of: {", ".join(allowed)}')
    return key, value


def parse_sync_options(options: Iterable[str]) -> dict[str, str]:
    """All options as a dict; the last occurrence of a key wins, as in Argo CD."""
    return dict(parse_sync_option(option) for option in options)
