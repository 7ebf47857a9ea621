"""One release across clusters, in the order a `MultiClusterRollout` sets. Pure.

A `MultiClusterRollout` (headway.dev/v1alpha1, docs/multi-cluster.md) names one Application
per cluster: `spec.canary.application` first, then `spec.groups[].applications` in order.
Each Application deploys the release (its Rollouts) into its own cluster and has automated
sync off: this core decides when each one is synced.

Every step the controller reads each Application and its Rollouts into a `ClusterState` and
`decide()` returns what to do:

    any cluster Failed (a Rollout aborted or Degraded, or the sync failed), or the release
    was aborted before                 -> Aborted: abort the Rollouts of every cluster the
                                          release reached; sync nothing; while a cluster is
                                          Failed and the revert is not settled, revert the
                                          release's revision in Git (its image change)
    else the first group not all Done  -> sync its Waiting clusters; wait for the rest
    every group Done                   -> Completed

The Aborted decision names the first group with a cluster that failed on its own: a cluster
Failed only because its Rollouts were aborted after they had fully promoted the release
(`after_done`, this controller's own abort when a later group failed) is never blamed while
another one failed, so the verdict does not move to the canary cluster the step after the
aborts land.

A group is allowed only when every earlier group is Done, so a bad release that fails in the
canary cluster never reaches another cluster, and one failure anywhere stops all of them.
The abort sticks to the release's revision: a new revision (the revert, or a fix) starts a
new walk from the canary cluster. The revert is the one Git convergence writes (same minimal
edit, same `Headway-Revert-Of` trailer), so a cluster already Done syncs back too, and a
revert Git convergence made first is only found, never made twice.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

__all__ = [
    "ClusterState",
    "Decision",
    "Order",
    "Phase",
    "SpecError",
    "Stage",
    "decide",
    "parse_order",
]


class SpecError(ValueError):
    """A malformed `MultiClusterRollout` spec; the message names the field."""


class Stage(enum.Enum):
    """Where the release stands in one cluster."""

    WAITING = "Waiting"  # the Application is OutOfSync: the release has not been synced there
    SYNCING = "Syncing"  # a sync operation is requested or running
    ROLLING = "Rolling"  # synced; its Rollouts have not all finished
    DONE = "Done"  # synced, and every Rollout Healthy on the release
    FAILED = "Failed"  # a Rollout aborted or Degraded, or the sync failed
    UNKNOWN = "Unknown"  # the Application or its cluster cannot be read

    @property
    def reached(self) -> bool:
        """The release was synced into this cluster (its Rollouts may run it)."""
        return self in (Stage.SYNCING, Stage.ROLLING, Stage.DONE, Stage.FAILED)


class Phase(enum.Enum):
    PROGRESSING = "Progressing"
    ABORTED = "Aborted"
    COMPLETED = "Completed"


@dataclass(frozen=True)
class Order:
    """The groups of Application names; group 0 is the canary cluster's."""

    groups: tuple[tuple[str, ...], ...]

    @property
    def applications(self) -> tuple[str, ...]:
        return tuple(name for group in self.groups for name in group)


@dataclass(frozen=True)
class ClusterState:
    application: str
    stage: Stage
    reason: str = ""
    aborted: bool = False  # every Rollout of the release in this cluster is aborted already
    # Failed only because its Rollouts were aborted after they had fully promoted the release
    # (by this controller, when another cluster failed): a consequence, not the failure
    after_done: bool = False


@dataclass(frozen=True)
class Decision:
    phase: Phase
    group: int  # the group being rolled out (or that failed); len(groups) when Completed
    sync: tuple[str, ...]  # Applications to sync now
    abort: tuple[str, ...]  # Applications whose Rollouts to abort now
    message: str
    revert: str = ""  # the revision whose image change to revert in Git now ("" for none)


def parse_order(spec: Mapping[str, Any]) -> Order:
    """The order of `spec`, or a `SpecError` naming the field that is wrong."""
    canary = spec.get("canary")
    if not isinstance(canary, Mapping) or not isinstance(canary.get("application"), str):
        raise SpecError("spec.canary.application: required, the canary cluster's Application")
    groups: list[tuple[str, ...]] = [(str(canary["application"]),)]
    raw_groups = spec.get("groups", [])
    if not isinstance(raw_groups, list):
        raise SpecError("spec.groups: must be a list of {applications: [...]}")
    for index, raw in enumerate(raw_groups):
        names = raw.get("applications") if isinstance(raw, Mapping) else None
        if not isinstance(names, list) or not names or not all(
            isinstance(n, str) and n for n in names
        ):
            raise SpecError(f"spec.groups[{index}].applications: a non-empty list of names")
        groups.append(tuple(names))
    seen: set[str] = set()
    for name in (n for group in groups for n in group):
        if name in seen:
            raise SpecError(f"spec: Application {name} is listed twice")
        seen.add(name)
    return Order(tuple(groups))


def decide(
    order: Order, states: Mapping[str, ClusterState], *, aborted_before: bool,
    revision: str = "", reverted: bool = False,
) -> Decision:
    """What to do next for the release, from each cluster's state (see the module doc).

    `revision` is the release's Git revision; `reverted` says its revert was settled already."""
    failed = [states[n] for n in order.applications if states[n].stage is Stage.FAILED]
    if failed or aborted_before:
        decision = _aborted(order, states, failed)
        return decision if reverted or not failed else replace(decision, revert=revision)
    for index, group in enumerate(order.groups):
        members = [states[name] for name in group]
        if all(state.stage is Stage.DONE for state in members):
            continue
        sync = tuple(s.application for s in members if s.stage is Stage.WAITING)
        waiting_on = ", ".join(
            f"{s.application} ({s.stage.value})" for s in members if s.stage is not Stage.DONE
        )
        return Decision(Phase.PROGRESSING, index, sync, (),
                        f"{_group_name(index)}: waiting for {waiting_on}")
    return Decision(Phase.COMPLETED, len(order.groups), (), (),
                    "the release is Done in every cluster")


def _aborted(
    order: Order, states: Mapping[str, ClusterState], failed: Sequence[ClusterState]
) -> Decision:
    abort = tuple(
        name for name in order.applications
        if states[name].stage.reached and not states[name].aborted
    )
    blamed = [s for s in failed if not s.after_done] or list(failed)
    group = next(
        (i for i, g in enumerate(order.groups) if any(s.application in g for s in blamed)), 0
    )
    if blamed:
        why = "; ".join(f"{s.application}: {s.reason or s.stage.value}" for s in blamed)
        message = f"{_group_name(group)} failed ({why}); every cluster it reached is aborted"
    else:
        message = "the release was aborted; a new revision starts again from the canary cluster"
    return Decision(Phase.ABORTED, group, (), abort, message)


def _group_name(index: int) -> str:
    return "the canary cluster" if index == 0 else f"group {index}"
