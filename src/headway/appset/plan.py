"""What the ApplicationSet controller does next, decided from the set, its generation and
the Applications it owns. Pure.

`decide()` returns a `Plan`: Applications to create, to update and to delete, the set's new
`status` (conditions as Argo CD writes them, and `applicationStatus` under RollingSync), and
why anything was held back. `applicationsSync` limits the writes (`create-only`,
`create-update`, `create-delete`, `sync`, the default). Two refusals go beyond Argo CD:

* a failed generation changes nothing (Argo CD agrees); and
* a generation that succeeds with **zero** Applications while the set owns some deletes
  nothing unless the set is annotated `headway.dev/allow-empty: "true"` — an emptied
  directory listing, a renamed path or an emptied list would otherwise delete every
  Application (and, through the finalizer, every resource) in one step.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from headway.appset import rolling_sync as rolling
from headway.appset.generate import Generation
from headway.appset.ignore import IgnoreError, compile_ignores, keep_ignored
from headway.kubetime import format_time, parse_time

__all__ = [
    "ALLOW_EMPTY_ANNOTATION",
    "EMPTY_REFUSED",
    "POLICIES",
    "Plan",
    "decide",
    "owner_reference",
    "policy_of",
    "resources_status",
    "with_write_error",
]

ALLOW_EMPTY_ANNOTATION = "headway.dev/allow-empty"
EMPTY_REFUSED = "EmptyGenerationRefused"
POLICIES = ("create-only", "create-update", "create-delete", "sync")
PRESERVED_ANNOTATIONS = (
    "notified.notifications.argoproj.io",
    "argocd.argoproj.io/refresh",
    "argocd.argoproj.io/hydrate",
)
# The Application controller's own finalizers (and their `/cleanup` companions), as Argo CD's
# defaultPreservedFinalizers: dropping one lets a deletion slip past the app's delete hooks.
PRESERVED_FINALIZER_PREFIXES = (
    "pre-delete-finalizer.argocd.argoproj.io",
    "post-delete-finalizer.argocd.argoproj.io",
)
CONDITION_TYPES = (
    "ErrorOccurred",
    "ParametersGenerated",
    "ResourcesUpToDate",
    "RolloutProgressing",
    "InvalidRolloutConfig",
)


@dataclass(frozen=True)
class Plan:
    creates: tuple[dict[str, Any], ...] = ()
    updates: tuple[dict[str, Any], ...] = ()
    deletes: tuple[str, ...] = ()
    status: dict[str, Any] = field(default_factory=dict)


def policy_of(spec: Mapping[str, Any]) -> str:
    return str((spec.get("syncPolicy") or {}).get("applicationsSync") or "sync")


def owner_reference(appset: Mapping[str, Any]) -> dict[str, Any]:
    meta = appset.get("metadata") or {}
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "ApplicationSet",
        "name": meta.get("name"),
        "uid": meta.get("uid"),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def decide(
    appset: Mapping[str, Any],
    generation: Generation,
    owned: Sequence[Mapping[str, Any]],
    *,
    invalid: Mapping[str, str],
    now: datetime,
) -> Plan:
    """The next writes for `appset`; `owned` are the live Applications it controls and
    `invalid` the generated ones refused (by project rules or destination), with why."""
    spec = appset.get("spec") or {}
    previous = list((appset.get("status") or {}).get("conditions") or [])
    if generation.error is not None:
        error = generation.error
        conditions = _error_conditions(error.reason, error.message, params_generated=False)
        return Plan(status=_status(appset, previous, conditions, now))
    live = {_name(a): a for a in owned}
    try:
        ignores = compile_ignores(spec.get("ignoreApplicationDifferences"))
    except IgnoreError as err:
        conditions = _error_conditions("UpdateApplicationError", str(err), params_generated=True)
        return Plan(status=_status(appset, previous, conditions, now))
    desired = {
        a.name: keep_ignored(a.manifest, live[a.name], ignores) if a.name in live else a.manifest
        for a in generation.apps
        if a.name not in invalid
    }
    rolled, app_status, rollout_conditions = _rolling(appset, desired, live, now)
    deletes, conditions = _deletes(appset, generation, live, invalid)
    status = _status(appset, previous, [*conditions, *rollout_conditions], now)
    status.pop("applicationStatus", None)
    if app_status is not None:
        status["applicationStatus"] = app_status
    status["resources"] = resources_status(
        [live.get(n) or m for n, m in sorted({**live, **rolled}.items()) if n not in deletes]
    )
    return Plan(_creates(appset, rolled, live), _updates(appset, rolled, live), deletes, status)


def _creates(
    appset: Mapping[str, Any], rolled: Mapping[str, Any], live: Mapping[str, Any]
) -> tuple[dict[str, Any], ...]:
    return tuple(_owned_by(appset, m) for n, m in sorted(rolled.items()) if n not in live)


def _updates(
    appset: Mapping[str, Any], rolled: Mapping[str, Any], live: Mapping[str, Any]
) -> tuple[dict[str, Any], ...]:
    """What `applicationsSync` lets the set rewrite, and only what changes."""
    if policy_of(appset.get("spec") or {}) not in ("sync", "create-update"):
        return ()
    found = (_updated(appset, m, live[n]) for n, m in sorted(rolled.items()) if n in live)
    return tuple(u for u in found if u is not None)


def _deletes(
    appset: Mapping[str, Any],
    generation: Generation,
    live: Mapping[str, Any],
    invalid: Mapping[str, str],
) -> tuple[tuple[str, ...], list[dict[str, str]]]:
    """The owned Applications no longer generated, when the policy deletes, and the
    conditions; zero generated Applications delete nothing without the annotation."""
    conditions = _success_conditions(invalid)
    if policy_of(appset.get("spec") or {}) not in ("sync", "create-delete"):
        return (), conditions
    deletes = tuple(sorted(set(live) - generation.names))
    if deletes and not generation.apps and not _allows_empty(appset):
        message = _empty_message(len(live))
        return (), _error_conditions(EMPTY_REFUSED, message, params_generated=True)
    return deletes, conditions


def resources_status(apps: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """`status.resources`: each Application the set manages, with its sync and health."""
    out: list[dict[str, Any]] = []
    for app in apps:
        meta = app.get("metadata") or {}
        status = app.get("status") or {}
        entry: dict[str, Any] = {
            "group": "argoproj.io",
            "version": "v1alpha1",
            "kind": "Application",
            "name": meta.get("name"),
            "namespace": meta.get("namespace"),
            "status": str((status.get("sync") or {}).get("status") or "Unknown"),
        }
        health = status.get("health") or {}
        entry["health"] = {"status": str(health.get("status") or "Unknown")}
        out.append(entry)
    return out


def _empty_message(count: int) -> str:
    return (
        f"the generators returned no Applications while this ApplicationSet owns {count}; "
        f"Headway deletes none of them (annotate the ApplicationSet "
        f'{ALLOW_EMPTY_ANNOTATION}: "true" to allow deleting them all)'
    )


def _allows_empty(appset: Mapping[str, Any]) -> bool:
    annotations = (appset.get("metadata") or {}).get("annotations") or {}
    return str(annotations.get(ALLOW_EMPTY_ANNOTATION, "")).lower() == "true"


def _name(app: Mapping[str, Any]) -> str:
    return str((app.get("metadata") or {}).get("name") or "")


def _owned_by(appset: Mapping[str, Any], manifest: Mapping[str, Any]) -> dict[str, Any]:
    meta = dict(manifest.get("metadata") or {})
    meta["ownerReferences"] = [owner_reference(appset)]
    return {**manifest, "metadata": meta}


def _updated(
    appset: Mapping[str, Any], manifest: Mapping[str, Any], live: Mapping[str, Any]
) -> dict[str, Any] | None:
    """The live Application with the generated spec, labels, annotations and finalizers
    (keeping the preserved ones); None when that changes nothing."""
    live_meta = live.get("metadata") or {}
    meta = dict(manifest.get("metadata") or {})
    preserved = (appset.get("spec") or {}).get("preservedFields") or {}
    annotations = dict(meta.get("annotations") or {})
    for key in (*PRESERVED_ANNOTATIONS, *(preserved.get("annotations") or [])):
        if key in (live_meta.get("annotations") or {}):
            annotations[key] = live_meta["annotations"][key]
    labels = dict(meta.get("labels") or {})
    for key in preserved.get("labels") or []:
        if key in (live_meta.get("labels") or {}):
            labels[key] = live_meta["labels"][key]
    finalizers = list(meta.get("finalizers") or [])
    finalizers += [
        f
        for f in live_meta.get("finalizers") or []
        if f.startswith(PRESERVED_FINALIZER_PREFIXES) and f not in finalizers
    ]
    new_meta = {
        **live_meta,
        "labels": labels,
        "annotations": annotations,
        "finalizers": finalizers,
        "ownerReferences": [owner_reference(appset)],
    }
    new_meta = {k: v for k, v in new_meta.items() if v not in ({}, [])}
    updated = {**live, "metadata": new_meta, "spec": manifest.get("spec") or {}}
    if "operation" in manifest:
        updated["operation"] = manifest["operation"]
    comparable = ("metadata", "spec", "operation")
    if all(updated.get(k) == live.get(k) for k in comparable):
        return None
    return {k: v for k, v in updated.items() if k != "status"}


def _rolling(
    appset: Mapping[str, Any],
    desired: dict[str, dict[str, Any]],
    live: Mapping[str, Mapping[str, Any]],
    now: datetime,
) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]] | None, list[dict[str, str]]]:
    """Under RollingSync: the desired Applications with automated sync off and the sync
    operation of those that became Pending, the new applicationStatus, its conditions."""
    spec = appset.get("spec") or {}
    if not rolling.is_rolling_sync(spec):
        return desired, None, []
    quiet = {n: rolling.disable_automated_sync(m) for n, m in desired.items()}
    labels = {n: dict((m.get("metadata") or {}).get("labels") or {}) for n, m in desired.items()}
    steps = rolling.app_steps(spec, labels)
    states = [_state(live[n], quiet.get(n)) for n in sorted(live)]
    previous = rolling.statuses_from((appset.get("status") or {}).get("applicationStatus"))
    statuses = rolling.advance(
        spec, rolling.update_statuses(previous, states, steps, now), steps, now
    )
    for name, status in statuses.items():
        if (
            name in quiet
            and status.status == rolling.PENDING
            and _sync_not_requested(live.get(name))
        ):
            quiet[name] = {**quiet[name], "operation": rolling.sync_operation(desired[name])}
    conditions = [_rollout_config_condition(steps), rolling.progressing_condition(spec, statuses)]
    return quiet, [statuses[n].to_obj() for n in sorted(statuses)], conditions


def _sync_not_requested(live: Mapping[str, Any] | None) -> bool:
    """A Pending Application gets the sync operation until it has one (it stays Pending only
    until a sync starts after the transition), so a lost write is written again."""
    return live is not None and not live.get("operation")


def _rollout_config_condition(steps: rolling.Steps) -> dict[str, str]:
    if steps.issues:
        return {
            "type": "InvalidRolloutConfig",
            "status": "True",
            "reason": "ApplicationSetInvalidRolloutConfig",
            "message": "; ".join(steps.issues),
        }
    return {
        "type": "InvalidRolloutConfig",
        "status": "False",
        "reason": "ApplicationSetValidRolloutConfig",
        "message": "Rolling Sync Configured correctly",
    }


def _state(live: Mapping[str, Any], desired: Mapping[str, Any] | None) -> rolling.AppState:
    status = live.get("status") or {}
    sync = status.get("sync") or {}
    spec = live.get("spec") or {}
    compared = sync.get("comparedTo") or {}
    source_now = spec.get("source") if "source" in compared else spec.get("sources")
    compared_source = compared.get("source") if "source" in compared else compared.get("sources")
    revisions = tuple(str(r) for r in (sync.get("revisions") or [sync.get("revision") or ""]) if r)
    started = (status.get("operationState") or {}).get("startedAt")
    return rolling.AppState(
        name=_name(live),
        sync_status=str(sync.get("status") or ""),
        health_status=str((status.get("health") or {}).get("status") or ""),
        revisions=revisions,
        spec_matches=desired is None or (desired.get("spec") or {}) == spec,
        compared_current=compared_source == source_now
        and compared.get("destination") == spec.get("destination"),
        operation_started=parse_time(started) if started else None,
        has_error=any(
            c.get("type") in ("InvalidSpecError", "UnknownError")
            for c in status.get("conditions") or []
            if isinstance(c, Mapping)
        ),
    )


def _success_conditions(invalid: Mapping[str, str]) -> list[dict[str, str]]:
    if invalid:
        names = sorted(invalid)
        message = invalid[names[-1]] + (f" (and {len(names) - 1} more)" if len(names) > 1 else "")
        return _error_conditions("ApplicationValidationError", message, params_generated=True)
    message = "All applications have been generated successfully"
    return [
        _params_condition(True, ""),
        {
            "type": "ResourcesUpToDate",
            "status": "True",
            "reason": "ApplicationSetUpToDate",
            "message": message,
        },
        {
            "type": "ErrorOccurred",
            "status": "False",
            "reason": "ApplicationSetUpToDate",
            "message": message,
        },
    ]


def _error_conditions(reason: str, message: str, *, params_generated: bool) -> list[dict[str, str]]:
    return [
        _params_condition(params_generated, message),
        {"type": "ErrorOccurred", "status": "True", "reason": reason, "message": message},
        {
            "type": "ResourcesUpToDate",
            "status": "False",
            "reason": "ErrorOccurred",
            "message": message,
        },
    ]


def _params_condition(generated: bool, message: str) -> dict[str, str]:
    if generated:
        return {
            "type": "ParametersGenerated",
            "status": "True",
            "reason": "ParametersGenerated",
            "message": "Successfully generated parameters for all Applications",
        }
    return {
        "type": "ParametersGenerated",
        "status": "False",
        "reason": "ErrorOccurred",
        "message": message,
    }


def _status(
    appset: Mapping[str, Any], previous: list[Any], conditions: list[dict[str, str]], now: datetime
) -> dict[str, Any]:
    """The set's status with `conditions`, each keeping its lastTransitionTime while its
    status stays the same; the others of the old status (resources, ...) kept."""
    before = {c.get("type"): c for c in previous if isinstance(c, Mapping)}
    merged: list[dict[str, Any]] = []
    for condition in conditions:
        old = before.get(condition["type"])
        same = old is not None and old.get("status") == condition["status"]
        stamp = old.get("lastTransitionTime") if same and old else format_time(now)
        merged.append({**condition, "lastTransitionTime": stamp})
    merged.sort(
        key=lambda c: CONDITION_TYPES.index(c["type"]) if c["type"] in CONDITION_TYPES else 99
    )
    status = dict(appset.get("status") or {})
    status["conditions"] = merged
    return status


def with_write_error(
    status: Mapping[str, Any], reason: str, message: str, *, now: datetime
) -> dict[str, Any]:
    """`status` after a write the store refused: `ErrorOccurred` with Argo's reason
    (`CreateApplicationError`, `UpdateApplicationError`, `DeleteApplicationError`)."""
    previous = list(status.get("conditions") or [])
    kept = [c for c in previous if c.get("type") not in ("ErrorOccurred", "ResourcesUpToDate")]
    conditions = [*kept, *_error_conditions(reason, message, params_generated=True)[1:]]
    merged = _status({"status": dict(status)}, previous, conditions, now)
    return merged
