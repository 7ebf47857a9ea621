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


# The automated sync policy's fields, by their key written lower-case: written as a sync
# option (argocd-autopilot's generated Applications carry `allowEmpty=true` beside
# `automated.allowEmpty: true`), Argo CD ignores them; the hint says where they belong.
_AUTOMATED_FIELDS = {"allowempty": "allowEmpty", "selfheal": "selfHeal", "enabled": "enabled"}


class SyncOptionError(ValueError):
    """An option that is not `Key=value` with a key and value Argo CD knows."""


def parse_sync_option(option: str) -> tuple[str, str]:
    """`"CreateNamespace=true"` -> `("CreateNamespace", "true")`, or a SyncOptionError."""
    key, sep, value = option.partition("=")
    key, value = key.strip(), value.strip()
    if not sep or not key:
        raise SyncOptionError(f'"{option}" is not a sync option (expected Key=value)')
    if key not in SYNC_OPTION_VALUES:
        raise SyncOptionError(f'"{key}" is not a known sync option{_unknown_key_hint(key)}')
    allowed = SYNC_OPTION_VALUES[key]
    if value not in allowed:
        raise SyncOptionError(f'{key}="{value}" must be one of: {", ".join(allowed)}')
    return key, value


def _unknown_key_hint(key: str) -> str:
    field = _AUTOMATED_FIELDS.get(key.lower())
    if field is not None:
        return (
            f" (it is a field of the automated sync policy, spec.syncPolicy.automated.{field}; "
            "Argo CD ignores it as a sync option)"
        )
    close = difflib.get_close_matches(key, list(SYNC_OPTION_VALUES), n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


def parse_sync_options(options: Iterable[str]) -> dict[str, str]:
    """All options as a dict; the last occurrence of a key wins, as in Argo CD."""
    return dict(parse_sync_option(option) for option in options)
