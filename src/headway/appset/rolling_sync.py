"""The RollingSync strategy: Applications updated step by step, as Argo CD does it. Pure.

Each step selects Applications by label `matchExpressions` (`In`/`NotIn`; an Application
without the label is outside an `In` step and inside a `NotIn` one); an Application belongs
to the first step that selects it. Generated Applications have automated sync turned off
(`automated.enabled: false`); the set's `status.applicationStatus` tracks each one:

    Waiting  -> Pending      its step is allowed (all earlier steps Healthy) and fewer than
                             `maxUpdate` of its step are Pending or Progressing: the set
                             writes a sync `operation` into the Application
    Pending  -> Progressing  the Application started a sync after the transition
    Progressing -> Healthy   Synced and Healthy
    any -> Waiting           the Application's revision or spec changed

Headway is stricter than Argo in one place: an Application counts as Synced only when its
`status.sync.comparedTo` is the spec the set wrote, so a status left from before a template
change can never mark a step done before the Application controller looked at the new spec.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from headway.kubetime import format_time, parse_time

__all__ = [
    "AppState",
    "AppStatus",
    "Steps",
    "advance",
    "app_steps",
    "deletes_in_reverse",
    "disable_automated_sync",
    "is_rolling_sync",
    "progressing_condition",
    "reverse_deletion_order",
    "statuses_from",
    "sync_operation",
    "update_statuses",
]

WAITING, PENDING, PROGRESSING, HEALTHY = "Waiting", "Pending", "Progressing", "Healthy"
REVISION_CHANGED = "Application has pending changes, setting status to Waiting"
SPEC_CHANGED = "Application has pending changes (spec differs), setting status to Waiting"
BOTH_CHANGED = (
    "Application has pending changes (revision and spec differ), setting status to Waiting"
)


@dataclass(frozen=True)
class AppStatus:
    """One entry of `status.applicationStatus`."""

    application: str
    status: str
    message: str
    step: str
    target_revisions: tuple[str, ...]
    last_transition_time: str

    def to_obj(self) -> dict[str, Any]:
        return {
            "application": self.application,
            "lastTransitionTime": self.last_transition_time,
            "message": self.message,
            "status": self.status,
            "step": self.step,
            "targetRevisions": list(self.target_revisions),
        }


@dataclass(frozen=True)
class AppState:
    """What the strategy reads of a live Application."""

    name: str
    sync_status: str
    health_status: str
    revisions: tuple[str, ...]
    spec_matches: bool  # the live spec is the spec the set generates (automated sync off)
    compared_current: bool  # status.sync.comparedTo is the live spec's source and destination
    operation_started: datetime | None
    has_error: bool


@dataclass(frozen=True)
class Steps:
    """Each generated Application's step (0-based) and what is wrong with the steps."""

    step_of: Mapping[str, int]
    members: tuple[tuple[str, ...], ...]
    issues: tuple[str, ...]


def is_rolling_sync(spec: Mapping[str, Any]) -> bool:
    strategy = spec.get("strategy") or {}
    return strategy.get("type") == "RollingSync" and isinstance(
        strategy.get("rollingSync"), Mapping
    )


def _steps(spec: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return list(((spec.get("strategy") or {}).get("rollingSync") or {}).get("steps") or [])


def app_steps(spec: Mapping[str, Any], labels_by_app: Mapping[str, Mapping[str, str]]) -> Steps:
    """Which step selects each Application (the first that does), and config problems."""
    steps = _steps(spec)
    members: list[list[str]] = [[] for _ in steps]
    step_of: dict[str, int] = {}
    issues: list[str] = []
    for name in sorted(labels_by_app):
        for index, step in enumerate(steps):
            selected, problem = _selects(step, labels_by_app[name])
            if problem and problem not in issues:
                issues.append(f"step {index + 1}: {problem}")
            if not selected:
                continue
            members[index].append(name)
            if name in step_of:
                issues.append(
                    f"Application {name} is selected by steps {step_of[name] + 1} and {index + 1}"
                )
            else:
                step_of[name] = index
    issues.extend(f"step {i + 1} selects no Application" for i, m in enumerate(members) if not m)
    return Steps(step_of, tuple(tuple(m) for m in members), tuple(issues))


def _selects(step: Mapping[str, Any], labels: Mapping[str, str]) -> tuple[bool, str]:
    for expression in step.get("matchExpressions") or []:
        key, operator = str(expression.get("key")), str(expression.get("operator"))
        values = [str(v) for v in expression.get("values") or []]
        if key not in labels:
            if operator == "In":
                return False, ""
            continue
        if operator not in ("In", "NotIn"):
            return False, f"invalid matchExpression operator {operator!r} (In or NotIn)"
        if (labels[key] in values) != (operator == "In"):
            return False, ""
    return True, ""


def statuses_from(raw: Any) -> dict[str, AppStatus]:
    """`status.applicationStatus` as read from the set."""
    out: dict[str, AppStatus] = {}
    for item in raw if isinstance(raw, list) else []:
        if isinstance(item, Mapping) and item.get("application"):
            name = str(item["application"])
            out[name] = AppStatus(
                name,
                str(item.get("status") or WAITING),
                str(item.get("message") or ""),
                str(item.get("step") or ""),
                tuple(str(r) for r in item.get("targetRevisions") or []),
                str(item.get("lastTransitionTime") or ""),
            )
    return out


def update_statuses(
    previous: Mapping[str, AppStatus], apps: Sequence[AppState], steps: Steps, now: datetime
) -> dict[str, AppStatus]:
    """Each live Application's status after looking at it again (before `advance`)."""
    stamp = format_time(now)
    out: dict[str, AppStatus] = {}
    for app in apps:
        step = str(steps.step_of[app.name] + 1) if app.name in steps.step_of else "-1"
        current = previous.get(app.name) or AppStatus(
            app.name,
            WAITING,
            "No Application status found, defaulting status to Waiting",
            step,
            app.revisions,
            stamp,
        )
        out[app.name] = _next_status(replace(current, step=step), app, stamp)
    return out


def _next_status(current: AppStatus, app: AppState, stamp: str) -> AppStatus:
    current = _waiting_on_change(current, app, stamp)
    synced = app.sync_status == "Synced" and app.compared_current and app.spec_matches
    healthy = synced and app.health_status == "Healthy"
    if current.status == WAITING:
        if healthy:
            message = "Application resource has synced, updating status to Healthy"
            return _moved(current, HEALTHY, message, stamp)
        if synced:
            message = "Application resource has synced, updating status to Progressing"
            return _moved(current, PROGRESSING, message, stamp)
        return current
    if current.status == PENDING:
        current = _pending_next(current, app, stamp)
    if current.status == PROGRESSING and healthy:
        message = "Application resource became Healthy, updating status from Progressing to Healthy"
        return _moved(current, HEALTHY, message, stamp)
    return current


def _waiting_on_change(current: AppStatus, app: AppState, stamp: str) -> AppStatus:
    """Back to Waiting when the Application's revision or spec changed."""
    revisions_changed = current.target_revisions != app.revisions
    spec_changed = not app.spec_matches
    if not (revisions_changed or spec_changed):
        return current
    if revisions_changed and spec_changed:
        message = BOTH_CHANGED
    else:
        message = REVISION_CHANGED if revisions_changed else SPEC_CHANGED
    return replace(
        current,
        target_revisions=app.revisions,
        message=message,
        status=WAITING,
        last_transition_time=stamp,
    )


def _pending_next(current: AppStatus, app: AppState, stamp: str) -> AppStatus:
    """Pending becomes Progressing once a sync started after the transition (or the
    Application reports an error that keeps it from syncing)."""
    since = parse_time(current.last_transition_time)
    if app.operation_started is not None and (since is None or app.operation_started >= since):
        message = (
            "Application resource became Progressing, updating status from Pending to Progressing"
        )
        return _moved(current, PROGRESSING, message, stamp)
    if app.has_error:
        message = "Application resource has error and cannot sync, updating status to Progressing"
        return _moved(current, PROGRESSING, message, stamp)
    return current


def _moved(current: AppStatus, status: str, message: str, stamp: str) -> AppStatus:
    return replace(current, status=status, message=message, last_transition_time=stamp)


def allowed_to_sync(statuses: Mapping[str, AppStatus], steps: Steps) -> frozenset[str]:
    """The Applications of every step up to the first step not entirely Healthy."""
    allowed: set[str] = set()
    for members in steps.members:
        allowed.update(members)
        done = all(name in statuses and statuses[name].status == HEALTHY for name in members)
        if not done:
            break
    return frozenset(allowed)


def advance(
    spec: Mapping[str, Any], statuses: Mapping[str, AppStatus], steps: Steps, now: datetime
) -> dict[str, AppStatus]:
    """Waiting Applications of allowed steps become Pending, at most `maxUpdate` per step
    Pending or Progressing at once (an integer, or a percentage of the step rounded down
    but at least 1 unless it is "0%")."""
    allowed = allowed_to_sync(statuses, steps)
    configured = _steps(spec)
    busy = [0] * len(configured)
    for name, status in statuses.items():
        if name in steps.step_of and status.status in (PENDING, PROGRESSING):
            busy[steps.step_of[name]] += 1
    out = dict(statuses)
    for name in sorted(statuses):
        index = steps.step_of.get(name)
        status = statuses[name]
        if index is None or status.status != WAITING or name not in allowed:
            continue
        limit = _max_update(configured[index].get("maxUpdate"), len(steps.members[index]))
        if limit is not None and busy[index] >= limit:
            continue
        message = (
            "Application moved to Pending status, "
            "watching for the Application resource to start Progressing"
        )
        out[name] = _moved(status, PENDING, message, format_time(now))
        busy[index] += 1
    return out


def _max_update(raw: Any, total: int) -> int | None:
    if raw is None:
        return None
    if isinstance(raw, str) and raw.endswith("%"):
        percent = int(raw[:-1] or 0)
        scaled = total * percent // 100
        return max(scaled, 1) if raw != "0%" else 0
    return int(raw)


def progressing_condition(
    spec: Mapping[str, Any], statuses: Mapping[str, AppStatus]
) -> dict[str, str]:
    """`RolloutProgressing`: True with the first step that is not entirely Healthy."""
    done: dict[str, bool] = {}
    for status in statuses.values():
        done[status.step] = done.get(status.step, True) and status.status == HEALTHY
    for index in range(len(_steps(spec))):
        step = str(index + 1)
        if step in done and not done[step]:
            return {
                "type": "RolloutProgressing",
                "status": "True",
                "reason": "ApplicationSetModified",
                "message": f"ApplicationSet is performing rollout of step {step}",
            }
    return {
        "type": "RolloutProgressing",
        "status": "False",
        "reason": "ApplicationSetRolloutComplete",
        "message": "ApplicationSet Rollout has completed",
    }


def disable_automated_sync(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """The Application with `automated.enabled: false` (RollingSync syncs it, not the app)."""
    spec = dict(manifest.get("spec") or {})
    policy = dict(spec.get("syncPolicy") or {})
    if isinstance(policy.get("automated"), Mapping):
        policy["automated"] = {**policy["automated"], "enabled": False}
        spec["syncPolicy"] = policy
    return {**manifest, "spec": spec}


def sync_operation(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """The sync `operation` RollingSync writes into a Pending Application."""
    policy = (manifest.get("spec") or {}).get("syncPolicy") or {}
    automated = policy.get("automated") or {}
    sync: dict[str, Any] = {"prune": automated.get("prune") is True}
    if policy.get("syncOptions"):
        sync["syncOptions"] = list(policy["syncOptions"])
    return {
        "initiatedBy": {"username": "applicationset-controller", "automated": True},
        "info": [
            {
                "name": "Reason",
                "value": "ApplicationSet RollingSync triggered a sync of this Application resource",
            }
        ],
        "sync": sync,
        "retry": dict(policy.get("retry") or {"limit": 5}),
    }


def deletes_in_reverse(spec: Mapping[str, Any]) -> bool:
    """`strategy.deletionOrder: Reverse` under RollingSync with steps."""
    strategy = spec.get("strategy") or {}
    reverse = str(strategy.get("deletionOrder") or "").lower() == "reverse"
    return is_rolling_sync(spec) and bool(_steps(spec)) and reverse


def reverse_deletion_order(
    spec: Mapping[str, Any], labels_by_app: Mapping[str, Mapping[str, str]]
) -> list[str]:
    """The Applications in the order a deleted set removes them: the last step first, those
    no step selects after all the others (garbage collection takes them in Argo CD), names
    sorted within a step."""
    steps = app_steps(spec, labels_by_app)
    count = len(_steps(spec))

    def rank(name: str) -> tuple[int, str]:
        index = steps.step_of.get(name)
        return (count if index is None else count - index - 1, name)

    return sorted(labels_by_app, key=rank)
