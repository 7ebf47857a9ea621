"""Where a release stands in one cluster, read from its Application and Rollouts. Pure.

An Application's `Stage` (`headway.rollout.cluster_order`), first match wins:

    a sync operation requested or running                   -> Syncing
    the last sync of the target revision Failed or Errored  -> Failed
    OutOfSync                                               -> Waiting
    not Synced (Unknown, no status yet)                     -> Unknown
    a Rollout that has not seen its spec yet                -> Rolling (its status, an
                                                               abort too, is the old spec's)
    a Rollout aborted or Degraded                           -> Failed (`after_done` when
                                                               every such Rollout was
                                                               aborted fully promoted on
                                                               the release: see below)
    a Rollout not Healthy on its current pod template, or
    the Application not Healthy                             -> Rolling
    else                                                    -> Done

A Rollout aborted while fully promoted on its current pod template (stable = current) ran
the release to the end in its cluster: the abort came from outside, from this controller
when another cluster failed (or an operator). Its cluster stays Failed, so the walk stops,
but with `after_done` set, so `decide` blames the cluster whose own Rollout failed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from headway.rollout.cluster_order import ClusterState, Stage

__all__ = ["ROLLOUT_GROUP", "cluster_state", "rollout_refs"]

ROLLOUT_GROUP = "argoproj.io"


def rollout_refs(app: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(namespace, name) of the Rollouts an Application deployed (its `status.resources`)."""
    refs = []
    for resource in (app.get("status") or {}).get("resources") or []:
        if resource.get("kind") == "Rollout" and resource.get("group") == ROLLOUT_GROUP:
            refs.append((str(resource.get("namespace") or "default"), str(resource["name"])))
    return refs


def cluster_state(
    name: str, app: Mapping[str, Any] | None, rollouts: Sequence[Mapping[str, Any]]
) -> ClusterState:
    """The stage of the release in the cluster of Application `name` (see the module doc)."""
    if app is None:
        return ClusterState(name, Stage.UNKNOWN, "the Application does not exist")
    status = app.get("status") or {}
    operation = status.get("operationState") or {}
    sync = status.get("sync") or {}
    if app.get("operation") or operation.get("phase") in ("Running", "Terminating"):
        return ClusterState(name, Stage.SYNCING, "sync in progress")
    synced_revision = (operation.get("syncResult") or {}).get("revision")
    if operation.get("phase") in ("Failed", "Error") and synced_revision == sync.get("revision"):
        return ClusterState(name, Stage.FAILED, f"sync failed: {operation.get('message')}")
    if sync.get("status") == "OutOfSync":
        return ClusterState(name, Stage.WAITING, "OutOfSync")
    if sync.get("status") != "Synced":
        return ClusterState(name, Stage.UNKNOWN, f"sync status {sync.get('status')}")
    return _rollouts_state(name, status, rollouts)


def _rollouts_state(
    name: str, status: Mapping[str, Any], rollouts: Sequence[Mapping[str, Any]]
) -> ClusterState:
    unseen = [_name(r) for r in rollouts if not _observed(r)]
    if unseen:  # its status is the old spec's: an abort there is not this release's
        return ClusterState(name, Stage.ROLLING, f"Rollout {', '.join(unseen)} in progress")
    failed = [r for r in rollouts if _failed(r)]
    if failed:
        aborted = all((r.get("status") or {}).get("abort") is True for r in failed)
        after_done = all(_aborted_after_done(r) for r in failed)
        why = "; ".join(f"Rollout {_name(r)}: {_message(r)}" for r in failed)
        if after_done:
            why = f"{why} (aborted after the release was Done here)"
        return ClusterState(name, Stage.FAILED, why, aborted=aborted, after_done=after_done)
    rolling = [_name(r) for r in rollouts if not _finished(r)]
    if rolling:
        return ClusterState(name, Stage.ROLLING, f"Rollout {', '.join(rolling)} in progress")
    health = (status.get("health") or {}).get("status")
    if health != "Healthy":
        return ClusterState(name, Stage.ROLLING, f"Application {health}")
    return ClusterState(name, Stage.DONE)


def _failed(rollout: Mapping[str, Any]) -> bool:
    status = rollout.get("status") or {}
    return status.get("abort") is True or status.get("phase") == "Degraded"


def _aborted_after_done(rollout: Mapping[str, Any]) -> bool:
    status = rollout.get("status") or {}
    return (
        status.get("abort") is True
        and bool(status.get("currentPodHash"))
        and status.get("stableRS") == status.get("currentPodHash")
    )


def _observed(rollout: Mapping[str, Any]) -> bool:
    status = rollout.get("status") or {}
    generation = str((rollout.get("metadata") or {}).get("generation") or "")
    return str(status.get("observedGeneration") or "") == generation


def _finished(rollout: Mapping[str, Any]) -> bool:
    status = rollout.get("status") or {}
    return (
        status.get("phase") == "Healthy"
        and bool(status.get("currentPodHash"))
        and status.get("stableRS") == status.get("currentPodHash")
    )


def _name(rollout: Mapping[str, Any]) -> str:
    meta = rollout.get("metadata") or {}
    return f"{meta.get('namespace')}/{meta.get('name')}"


def _message(rollout: Mapping[str, Any]) -> str:
    status = rollout.get("status") or {}
    return str(status.get("message") or status.get("phase") or "aborted")
