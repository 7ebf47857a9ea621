"""The Application's status as Argo CD shapes it, from a comparison; and what the metrics
see of it. Purely computational."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from headway.controllers.app.metrics import AppSample
from headway.kubetime import format_time, parse_time
from headway.model.application import Retry, SyncPolicy
from headway.model.obj import Obj
from headway.source.spec import raw_sources
from headway.sync.comparison import Comparison
from headway.sync.retry import AUTOMATED_DEFAULT_RETRY

__all__ = [
    "compared_status",
    "comparison_conditions",
    "condition",
    "keep_transition_times",
    "live_images",
    "metrics_sample",
    "without_stamps",
    "worth_writing",
]



def condition(kind: str, message: str, now: datetime) -> Obj:
    return {"type": kind, "message": message, "lastTransitionTime": format_time(now)}


def compared_status(
    raw: Mapping[str, Any], comparison: Comparison, revisions: Sequence[str], now: datetime
) -> Obj:
    """`sync`, `health`, `resources` and `reconciledAt`."""
    sources = raw_sources(raw)
    destination = dict((raw.get("spec") or {}).get("destination") or {})
    compared: Obj = {"destination": destination}
    sync: Obj = {"status": comparison.sync_status, "comparedTo": compared}
    if len(sources) > 1:
        compared["sources"] = [dict(s) for s in sources]
        sync["revisions"] = list(revisions)
    else:
        compared["source"] = dict(sources[0]) if sources else {}
        sync["revision"] = revisions[0] if revisions else ""
    health: Obj = {"status": str(comparison.health.status)}
    if comparison.health.message:
        health["message"] = comparison.health.message
    return {
        "sync": sync,
        "health": health,
        "resources": [r.to_status() for r in comparison.resources],
        "summary": {"images": live_images(comparison.live.values())},
        "reconciledAt": format_time(now),
    }


def _pod_spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = obj.get("spec") or {}
    if obj.get("kind") == "Pod":
        return spec
    if obj.get("kind") == "CronJob":
        spec = (spec.get("jobTemplate") or {}).get("spec") or {}
    return (spec.get("template") or {}).get("spec") or {}


def live_images(live: Iterable[Mapping[str, Any]]) -> list[str]:
    """`status.summary.images`: every container image the app's live workloads run, sorted
    (Argo CD lists the images of its resource tree the same way)."""
    images: set[str] = set()
    for obj in live:
        spec = _pod_spec(obj)
        for container in [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]:
            if isinstance(container, Mapping) and container.get("image"):
                images.add(str(container["image"]))
    return sorted(images)


def comparison_conditions(
    comparison: Comparison,
    render_warnings: Sequence[str],
    now: datetime,
    *,
    system_warnings: Sequence[str] = (),
) -> list[Obj]:
    """`system_warnings`: argocd-cm's system-wide rules that hide a release of this app."""
    out = [condition("SharedResourceWarning", s, now) for s in comparison.shared]
    out += [condition("ComparisonWarning", w, now) for w in render_warnings]
    out += [condition("IgnoreDifferencesWarning", w, now) for w in comparison.ignore_warnings]
    out += [condition("IgnoreDifferencesWarning", w, now) for w in system_warnings]
    return out


def without_stamps(status: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in status.items() if k != "reconciledAt"}


def worth_writing(
    old: Mapping[str, Any], new: Mapping[str, Any], *, now: datetime, restamp_seconds: float
) -> bool:
    """Whether a step's status is worth a write. Every write wakes every watcher of
    Applications, so a refresh that changed nothing but `reconciledAt` is written only once
    the stored stamp is `restamp_seconds` (the poll interval) old: `reconciledAt` then tells
    the last refresh to within one poll interval, and an idle app costs one write per
    interval instead of one per step."""
    if without_stamps(old) != without_stamps(new):
        return True
    if new.get("reconciledAt") == old.get("reconciledAt"):
        return False
    last = parse_time(old.get("reconciledAt"))
    return last is None or (now - last).total_seconds() >= restamp_seconds


def keep_transition_times(old: Sequence[Obj], new: Sequence[Obj]) -> list[Obj]:
    """A condition that was already there keeps the time it first appeared."""
    seen = {(c.get("type"), c.get("message")): c.get("lastTransitionTime") for c in old}
    out = []
    for item in new:
        since = seen.get((item.get("type"), item.get("message")))
        out.append({**item, "lastTransitionTime": since} if since else item)
    return out


def retries_left(status: Mapping[str, Any], retry: Retry | None) -> float:
    """The automated-sync retries still allowed for the revision that failed last: the limit
    (5 without a policy) less `operationState.retryCount` of a failed operation; the whole
    limit after a success. Purely computational."""
    limit = (retry or AUTOMATED_DEFAULT_RETRY).limit
    if limit < 0:
        return math.inf
    state = status.get("operationState") or {}
    done = int(state.get("retryCount") or 0) if state.get("phase") in ("Failed", "Error") else 0
    return float(max(limit - done, 0))


def metrics_sample(
    raw: Mapping[str, Any],
    status: Mapping[str, Any],
    project: str,
    *,
    observed_at: float = 0.0,
    policy: SyncPolicy | None = None,
) -> AppSample:
    meta = raw["metadata"]
    exhausted = any(
        c.get("type") == "SyncError" and "retry budget spent" in str(c.get("message"))
        for c in status.get("conditions") or []
    )
    return AppSample(
        name=str(meta["name"]),
        namespace=str(meta.get("namespace") or ""),
        project=project,
        sync_status=str((status.get("sync") or {}).get("status") or "Unknown"),
        health_status=str((status.get("health") or {}).get("status") or "Unknown"),
        operation=str((status.get("operationState") or {}).get("phase") or ""),
        operation_started=str((status.get("operationState") or {}).get("startedAt") or ""),
        dest_server=str(((raw.get("spec") or {}).get("destination") or {}).get("server") or ""),
        budget_exhausted=exhausted,
        observed_at=observed_at,
        retries_left=retries_left(status, policy.retry)
        if policy and policy.automated else None,
    )


def settled_kinds(status: Mapping[str, Any]) -> frozenset[tuple[str, str]] | None:
    """The (apiVersion, kind) of every resource of an app with nothing left to wait for
    (Synced, Healthy, no operation running); None while it waits for something. A settled
    app changes only through a watch event on one of these kinds, its own object or a new
    commit, so a periodic look at it in between finds nothing."""
    if ((status.get("sync") or {}).get("status") != "Synced"
            or (status.get("health") or {}).get("status") != "Healthy"):
        return None
    if (status.get("operationState") or {}).get("phase") in ("Running", "Terminating"):
        return None
    kinds = set()
    for resource in status.get("resources") or []:
        group, version = resource.get("group") or "", resource.get("version") or ""
        kinds.add((f"{group}/{version}" if group else version, str(resource.get("kind"))))
    return frozenset(kinds)
