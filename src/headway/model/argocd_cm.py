"""Which keys of Argo CD's `argocd-cm` ConfigMap Headway reads, and what it says about the rest.

Headway's controller reads the health customizations of `argocd-cm` (`health/overrides.py`)
and its diff customizations: system-wide ignoreDifferences and `resource.compareoptions`
(`model/argocd_diff.py`, whose problems `headway validate` reports at their key's line).
Argo CD reads many more keys there, and a newcomer pastes them from Argo CD's operator
manual expecting them to act: resource exclusions, Kustomize build options, tracking by
label. Such a key is not silently dropped:
`headway validate` warns at its line with what Headway does instead, and `headway serve`
prints the same at start. Keys that only configure Argo CD's UI, SSO, accounts or API server
have no meaning for a controller without those and are passed over quietly
(docs/applications.md, "argocd-cm"). `argocd-cmd-params-cm` and `argocd-rbac-cm`, of which
Headway reads nothing, get one warning at their name. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from headway.model import yamlload
from headway.model.diagnostics import Diagnostic, Severity
from headway.model.yamlload import Document

__all__ = [
    "ARGOCD_CM_NAME",
    "UnreadKey",
    "argocd_cm_diagnostics",
    "unread_keys",
]

ARGOCD_CM_NAME = "argocd-cm"

# Read by the health overrides (health/overrides.py) and the diff (model/argocd_diff.py:
# its IGNORE_PREFIX and COMPARE_OPTIONS_KEY, spelt here so that validating any ConfigMap does
# not import the diff settings; tests/model/test_argocd_cm_keys.py holds them equal).
_READ_PREFIXES = (
    "resource.customizations.health.", "resource.customizations.useOpenLibs.",
    "resource.customizations.ignoreDifferences.", "resource.compareoptions",
)  # fmt: skip
_BLOCK_KEY = "resource.customizations"
_BLOCK_FIELDS_READ = frozenset({"health.lua", "health.lua.useOpenLibs", "ignoreDifferences"})

# Keys for Argo CD's UI, login, accounts, API server and links: nothing in a controller
# without those acts on them, so they are passed over without a word.
_QUIET_PREFIXES = (
    "accounts.", "admin.", "dex.", "exec.", "extension.", "ga.", "help.", "oidc.",
    "server.", "statusbadge.", "ui.", "users.", "webhook.",
)  # fmt: skip
_QUIET_KEYS = frozenset({
    "url", "additionalUrls", "passwordPattern", "installationID", "project.links",
    "application.links", "resource.links", "resource.sensitive.mask.annotations",
    "application.allowedNodeLabels",
})  # fmt: skip

_IGNORED = "Headway does not read it, so it is ignored"
# (key prefix, what Headway does instead); the first matching prefix gives the reason.
_REASONS: tuple[tuple[str, str], ...] = (
    (
        "resource.customizations.knownTypeFields.",
        f"{_IGNORED}: quantities under requests, limits and the other resource maps already "
        "compare by value in every kind (`cpu: 0.1` equals `100m`), which is what the "
        "documented Rollout PodSpec case needs; other Kubernetes types compare as written",
    ),
    ("resource.customizations.actions.", f"{_IGNORED}: resource actions are not supported"),
    (
        "resource.customizations.ignoreResourceUpdates.",
        f"{_IGNORED}: it only saves Argo CD refreshes, and Headway's diff is the same without it",
    ),
    ("resource.ignoreResourceUpdatesEnabled", f"{_IGNORED}: it only saves Argo CD refreshes"),
    (
        "resource.exclusions",
        f"{_IGNORED}: every kind in the rendered manifests is managed, "
        "and live objects are found by their tracking annotation",
    ),
    ("resource.inclusions", f"{_IGNORED}: every kind in the rendered manifests is managed"),
    (
        "kustomize.",
        f"{_IGNORED}: `kustomize build` runs with Headway's defaults and the `kustomize` on PATH",
    ),
    ("helm.", f"{_IGNORED}: Helm charts are always rendered"),
    ("jsonnet.", f"{_IGNORED}: Jsonnet is rendered when the `jsonnet` extra is installed"),
    (
        "application.resourceTrackingMethod",
        f"{_IGNORED}: Headway always tracks resources by "
        "the `argocd.argoproj.io/tracking-id` annotation",
    ),
    (
        "application.instanceLabelKey",
        f"{_IGNORED}: Headway tracks resources by annotation and does not label them",
    ),
    (
        "application.sync.impersonation.",
        f"{_IGNORED}: syncs run with Headway's own credentials, not a destination service account",
    ),
    ("timeout.", f"{_IGNORED}: Git is polled every `headway serve --app-poll-seconds`"),
)
_TRACKING_KEY = "application.resourceTrackingMethod"
_SAME_AS_HEADWAY = {_TRACKING_KEY: "annotation"}


@dataclass(frozen=True)
class UnreadKey:
    """An argocd-cm entry Argo CD acts on and Headway does not; `path` is under `data`."""

    path: tuple[str, ...]
    reason: str


def unread_keys(data: Mapping[str, Any]) -> list[UnreadKey]:
    """The entries of argocd-cm `data` that change Argo CD's behaviour and that Headway
    does not read, in the ConfigMap's order."""
    found: list[UnreadKey] = []
    for raw_key, value in data.items():
        key = str(raw_key)
        if key == _BLOCK_KEY:
            found.extend(_unread_block_fields(value))
        elif _is_read_or_quiet(key) or _SAME_AS_HEADWAY.get(key) == str(value).strip():
            continue
        else:
            found.append(UnreadKey((key,), _reason(key)))
    return found


# Argo CD ConfigMaps Headway reads nothing from, and where their settings live instead.
_UNREAD_CONFIG_MAPS = {
    "argocd-cmd-params-cm": "Headway reads nothing from this ConfigMap: its settings are "
    "Argo CD components' command-line flags, and Headway's are the options of `headway serve` "
    "(`headway serve --help`)",
    "argocd-rbac-cm": "Headway reads nothing from this ConfigMap: its policies authorize users "
    "of Argo CD's API server and UI; Headway's dashboard acts only after a login with its token "
    "(docs/dashboard.md), and projects still limit what each Application may deploy",
}


def argocd_cm_diagnostics(document: Document) -> list[Diagnostic]:
    """A warning at each unread key of an `argocd-cm` ConfigMap, and one at the name of an
    Argo CD ConfigMap Headway does not read at all; nothing for other objects."""
    obj = document.obj
    if document.kind != "ConfigMap":
        return []
    unread_map = _UNREAD_CONFIG_MAPS.get(document.name)
    if unread_map is not None:
        return [document.diagnostic(("metadata", "name"), unread_map, Severity.WARNING)]
    if document.name != ARGOCD_CM_NAME:
        return []
    data = obj.get("data") if isinstance(obj, dict) else None
    if not isinstance(data, Mapping):
        return []
    found = [
        document.diagnostic(("data", *unread.path), unread.reason, Severity.WARNING)
        for unread in unread_keys(data)
    ]
    from headway.model import argocd_diff  # here: it imports jq and the Application model

    for problem in argocd_diff.diff_customizations(data).problems:
        severity = Severity.ERROR if problem.error else Severity.WARNING
        found.append(document.diagnostic(("data", problem.key), problem.message, severity))
    return found


def _is_read_or_quiet(key: str) -> bool:
    return (
        key.startswith(_READ_PREFIXES)
        or key in _QUIET_KEYS
        or key.startswith(_QUIET_PREFIXES)
        or _is_unknown_customization(key)
    )


def _is_unknown_customization(key: str) -> bool:
    """A `resource.customizations.<type>.<...>` key of a type Argo CD does not know: the
    diff settings report it as an error (Argo CD refuses every setting then)."""
    from headway.model import argocd_diff

    parts = key.split(".", 3)
    return (
        key.startswith(_BLOCK_KEY + ".")
        and len(parts) == 4
        and parts[2] not in argocd_diff.CUSTOMIZATION_TYPES
    )


def _reason(key: str) -> str:
    for prefix, reason in _REASONS:
        if key.startswith(prefix):
            return reason
    return _IGNORED


def _unread_block_fields(text: Any) -> list[UnreadKey]:
    """Fields other than the health script in the older `resource.customizations` block
    (`<group>/<kind>:` entries holding `health.lua`, `ignoreDifferences`, `actions`, ...)."""
    try:
        parsed = yamlload.load_one(str(text))
    except yaml.YAMLError:  # the health reader reports a block it cannot parse
        return []
    if not isinstance(parsed, Mapping):
        return []
    found: list[UnreadKey] = []
    for group_kind, entry in parsed.items():
        fields = entry if isinstance(entry, Mapping) else {}
        for name in fields:
            if str(name) not in _BLOCK_FIELDS_READ:
                reason = _reason(f"resource.customizations.{name}.")
                found.append(UnreadKey((_BLOCK_KEY,), f"{group_kind}: {name}: {reason}"))
    return found
