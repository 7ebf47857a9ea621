"""Build a `RolloutContext` from plain dicts, for pure decision tests (no cluster)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from headway.clock import EPOCH
from headway.kubetime import format_time
from headway.model.rollout import parse_rollout
from headway.model.yamlload import Document
from headway.rollout.context import RolloutContext
from headway.rollout.plan import Plan
from headway.rollout.reconcile import decide, step_hash
from headway.rollout.replica_sets import ReplicaSetView, sort_replica_sets
from headway.rollout.runs import RunView


def rollout_obj(
    *,
    replicas: int = 4,
    canary: dict[str, Any] | None = None,
    blue_green: dict[str, Any] | None = None,
    status: dict[str, Any] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    strategy = {"blueGreen": blue_green} if blue_green is not None else {"canary": canary or {}}
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Rollout",
        "metadata": {"name": "web", "namespace": "default", "uid": "u1", "generation": 1},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": []}},
            "strategy": strategy,
            **spec,
        },
        "status": status or {},
    }


def rs(
    pod_hash: str,
    replicas: int,
    *,
    revision: int,
    available: int | None = None,
    created: int = 0,
    deadline: datetime | None = None,
) -> ReplicaSetView:
    ready = replicas if available is None else available
    return ReplicaSetView(
        name=f"web-{pod_hash}",
        pod_hash=pod_hash,
        revision=revision,
        replicas=replicas,
        status_replicas=replicas,
        ready=ready,
        available=ready,
        created=format_time(EPOCH + timedelta(seconds=created)),
        scale_down_deadline=deadline,
    )


def run(
    name: str,
    phase: str,
    *,
    kind: str = "Step",
    step: int | None = 1,
    pod_hash: str = "new",
    message: str = "",
    created: str = "",
) -> RunView:
    return RunView(
        name=name,
        rollout_type=kind,
        step_index=step,
        pod_hash=pod_hash,
        phase=phase,
        message=message,
        superseded=False,
        created=created,
    )


def context(
    obj: dict[str, Any],
    sets: list[ReplicaSetView],
    *,
    current: str = "new",
    runs: tuple[RunView, ...] = (),
    templates: dict[Any, Any] | None = None,
    now: datetime = EPOCH,
) -> RolloutContext:
    rollout, diagnostics = parse_rollout(Document(obj=obj, file="test", index=0, line=1))
    assert rollout is not None, diagnostics
    stable = str((obj.get("status") or {}).get("stableRS") or "")
    return RolloutContext(
        obj=obj,
        rollout=rollout,
        current_hash=current,
        sets=sort_replica_sets(sets, current_hash=current, stable_hash=stable),
        runs=runs,
        templates=templates or {},
        now=now,
    )


def mid_update_status(obj: dict[str, Any], *, index: int, **extra: Any) -> dict[str, Any]:
    """A status as the controller leaves it mid-update (current hash `new`, stable `old`)."""
    base = {"stableRS": "old", "currentPodHash": "new", "currentStepIndex": index, "canary": {}}
    probe = context({**obj, "status": base}, [rs("new", 0, revision=2)])
    return {**base, "currentStepHash": step_hash(probe), **extra}


def decide_with(obj: dict[str, Any], sets: list[ReplicaSetView], **kw: Any) -> Plan:
    return decide(context(obj, sets, **kw))
