"""`headway app create`, `app set` and `app delete`: the Application edits Argo users script.

The flags are `argocd app create/set`'s common ones. `edit_spec()` turns them into a new
`spec` (purely computational); the commands read and write the store. An Application they
would write is validated like a manifest first, so a bad flag value is an error naming the
field, never a half-written Application.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["AppFlags", "FlagError", "edit_spec", "parse_labels", "validation_errors"]

AUTOMATED_POLICIES = ("automated", "automatic", "auto")
MANUAL_POLICIES = ("none", "manual")


class FlagError(ValueError):
    """Flags that cannot be applied; the message names the flag."""


@dataclass(frozen=True)
class AppFlags:
    """The flags given (None: not given, so the spec keeps what it has)."""

    repo: str | None = None
    path: str | None = None
    revision: str | None = None
    chart: str | None = None
    dest_server: str | None = None
    dest_name: str | None = None
    dest_namespace: str | None = None
    project: str | None = None
    sync_policy: str | None = None
    auto_prune: bool | None = None
    self_heal: bool | None = None
    sync_options: tuple[str, ...] = ()
    values: tuple[str, ...] = ()
    helm_sets: tuple[str, ...] = ()
    directory_recurse: bool | None = None


def _set(target: dict[str, Any], key: str, value: object) -> None:
    if value is not None:
        target[key] = value


def _touches_source(flags: AppFlags) -> bool:
    return any(v is not None for v in (flags.repo, flags.path, flags.revision, flags.chart)) or (
        bool(flags.values or flags.helm_sets) or flags.directory_recurse is not None
    )


def _source(source: dict[str, Any], flags: AppFlags) -> dict[str, Any]:
    _set(source, "repoURL", flags.repo)
    _set(source, "path", flags.path)
    _set(source, "targetRevision", flags.revision)
    _set(source, "chart", flags.chart)
    if flags.values or flags.helm_sets:
        source["helm"] = _helm(dict(source.get("helm") or {}), flags)
    if flags.directory_recurse is not None:
        directory = dict(source.get("directory") or {})
        source["directory"] = {**directory, "recurse": flags.directory_recurse}
    return source


def _helm(helm: dict[str, Any], flags: AppFlags) -> dict[str, Any]:
    if flags.values:
        helm["valueFiles"] = list(flags.values)
    params = {str(p.get("name")): p for p in helm.get("parameters") or [] if isinstance(p, dict)}
    for assignment in flags.helm_sets:
        name, sep, value = assignment.partition("=")
        if not sep or not name:
            raise FlagError(f"--helm-set {assignment!r}: expected NAME=VALUE")
        params[name] = {"name": name, "value": value}
    if params:
        helm["parameters"] = list(params.values())
    return helm


def _sync_policy(spec: dict[str, Any], flags: AppFlags) -> dict[str, Any] | None:
    policy = dict(spec.get("syncPolicy") or {})
    automated = policy.get("automated")
    chosen = (flags.sync_policy or "").lower()
    if chosen in MANUAL_POLICIES:
        automated = None
    elif chosen in AUTOMATED_POLICIES:
        automated = dict(automated or {})
    elif chosen:
        allowed = ", ".join((*MANUAL_POLICIES, *AUTOMATED_POLICIES))
        raise FlagError(f"--sync-policy {flags.sync_policy!r}: expected one of {allowed}")
    for flag, key, value in (
        ("--auto-prune", "prune", flags.auto_prune),
        ("--self-heal", "selfHeal", flags.self_heal),
    ):
        if value is None:
            continue
        if not isinstance(automated, dict):
            raise FlagError(f"{flag} requires an automated sync policy (--sync-policy automated)")
        automated = {**automated, key: value}
    _put(policy, "automated", automated)
    if flags.sync_options:
        options = list(dict.fromkeys([*(policy.get("syncOptions") or []), *flags.sync_options]))
        policy["syncOptions"] = options
    return policy or None


def _put(target: dict[str, Any], key: str, value: object) -> None:
    if value is None:
        target.pop(key, None)
    else:
        target[key] = value


def edit_spec(spec: Mapping[str, Any], flags: AppFlags) -> dict[str, Any]:
    """The Application `spec` with the flags applied (purely computational)."""
    edited = dict(spec)
    if isinstance(edited.get("sources"), list) and not edited.get("source"):
        if _touches_source(flags):
            raise FlagError(
                "source flags edit `spec.source`, and this application has `spec.sources`; "
                "edit its manifest instead"
            )
    else:
        edited["source"] = _source(dict(edited.get("source") or {}), flags)
    destination = dict(edited.get("destination") or {})
    _set(destination, "server", flags.dest_server)
    _set(destination, "name", flags.dest_name)
    _set(destination, "namespace", flags.dest_namespace)
    edited["destination"] = destination
    _set(edited, "project", flags.project)
    _put(edited, "syncPolicy", _sync_policy(edited, flags))
    return edited


def parse_labels(labels: Sequence[str]) -> dict[str, str]:
    found = {}
    for label in labels:
        key, sep, value = label.partition("=")
        if not sep or not key:
            raise FlagError(f"--label {label!r}: expected KEY=VALUE")
        found[key] = value
    return found


def validation_errors(app: Mapping[str, Any], where: str) -> list[str]:
    """What validating the Application as a manifest says is wrong (errors only)."""
    import yaml

    from headway.model.diagnostics import Severity
    from headway.model.validate import validate_text

    report = validate_text(yaml.safe_dump(dict(app), sort_keys=False), where)
    # The lines are those of YAML written here, not the user's: name the field only.
    return [
        f"{d.kind}/{d.name}: {d.field + ': ' if d.field else ''}{d.message}"
        for d in report.diagnostics
        if d.severity is Severity.ERROR
    ]
