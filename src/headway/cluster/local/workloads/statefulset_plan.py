"""What a StatefulSet does next, and the status it reports. Purely computational.

Pods are `<name>-<ordinal>`. One call decides one step, as Kubernetes' StatefulSet
controller does:

* `OrderedReady` (the default): the first ordinal below `replicas` without a Pod is
  created, but only once every lower one is Running and Ready; nothing else happens while a
  Pod is not ready or terminating. Scale-down deletes the highest ordinal first, one at a
  time, waiting for it to be gone. `Parallel`: every missing Pod is created and every
  condemned one deleted at once.
* `RollingUpdate`: once every Pod is ready, the highest-ordinal Pod at or above
  `partition` (default 0) whose revision is not the update revision is deleted (it comes
  back at the update revision), one at a time. Ordinals below the partition are recreated
  at the current revision. `OnDelete`: nothing is deleted; a Pod the user deletes comes back
  at the update revision.
* A Pod that has `Failed` or `Succeeded` is deleted, to be created again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["PodView", "StatefulSetShape", "StatefulStep", "plan_step", "revision_counts"]


@dataclass(frozen=True)
class PodView:
    ordinal: int
    revision: str
    ready: bool
    terminating: bool
    finished: bool = False  # phase Succeeded or Failed
    available: bool | None = None  # ready for `minReadySeconds`; None: as `ready`


@dataclass(frozen=True)
class StatefulSetShape:
    replicas: int
    parallel: bool
    on_delete: bool
    partition: int
    current_revision: str
    update_revision: str

    @staticmethod
    def of(sts: Mapping[str, Any], *, update_revision: str) -> StatefulSetShape:
        spec = sts.get("spec") or {}
        strategy = spec.get("updateStrategy") or {}
        partition = (strategy.get("rollingUpdate") or {}).get("partition") or 0
        current = str((sts.get("status") or {}).get("currentRevision") or update_revision)
        return StatefulSetShape(
            replicas=int(spec.get("replicas", 1)),
            parallel=spec.get("podManagementPolicy") == "Parallel",
            on_delete=strategy.get("type") == "OnDelete",
            partition=int(partition),
            current_revision=current,
            update_revision=update_revision,
        )

    def revision_for(self, ordinal: int) -> str:
        """The revision a new Pod of `ordinal` gets."""
        if not self.on_delete and ordinal < self.partition:
            return self.current_revision
        return self.update_revision


@dataclass(frozen=True)
class StatefulStep:
    create: tuple[tuple[int, str], ...] = ()  # (ordinal, revision)
    delete: tuple[int, ...] = ()
    reason: str = ""  # what it waits for, when it does nothing


def plan_step(shape: StatefulSetShape, pods: Sequence[PodView]) -> StatefulStep:
    by_ordinal = {p.ordinal: p for p in pods}
    finished = tuple(p.ordinal for p in pods if p.finished and not p.terminating)
    if finished:
        return StatefulStep(delete=finished)
    missing = [i for i in range(shape.replicas) if i not in by_ordinal]
    condemned = sorted((p for p in pods if p.ordinal >= shape.replicas),
                       key=lambda p: -p.ordinal)
    if shape.parallel:
        step = StatefulStep(
            create=tuple((i, shape.revision_for(i)) for i in missing),
            delete=tuple(p.ordinal for p in condemned if not p.terminating),
        )
        if step.create or step.delete:
            return step
    else:
        for ordinal in range(shape.replicas):
            pod = by_ordinal.get(ordinal)
            if pod is None:
                return StatefulStep(create=((ordinal, shape.revision_for(ordinal)),))
            if pod.terminating or not pod.ready:
                return StatefulStep(reason=f"pod {ordinal} is not ready")
        if condemned:
            if any(p.terminating for p in condemned):
                return StatefulStep(reason="a condemned pod is terminating")
            return StatefulStep(delete=(condemned[0].ordinal,))
    return _rolling_update(shape, by_ordinal)


def _rolling_update(shape: StatefulSetShape, by_ordinal: Mapping[int, PodView]) -> StatefulStep:
    if shape.on_delete:
        return StatefulStep()
    if any(p.terminating or not p.ready for p in by_ordinal.values()):
        return StatefulStep(reason="waiting for every pod to be ready")
    for ordinal in range(shape.replicas - 1, shape.partition - 1, -1):
        pod = by_ordinal.get(ordinal)
        if pod is not None and pod.revision != shape.update_revision:
            return StatefulStep(delete=(ordinal,))
    return StatefulStep()


def revision_counts(shape: StatefulSetShape, pods: Sequence[PodView]) -> dict[str, Any]:
    """The status counts and revisions; `currentRevision` becomes the update revision once
    every wanted Pod runs it."""
    live = [p for p in pods if not p.terminating]
    updated = sum(1 for p in live if p.revision == shape.update_revision)
    current_revision = shape.current_revision
    if updated == shape.replicas == len(live):
        current_revision = shape.update_revision
    current = sum(1 for p in live if p.revision == current_revision)
    ready = sum(1 for p in live if p.ready)
    available = sum(1 for p in live if (p.ready if p.available is None else p.available))
    return {
        "replicas": len(live),
        "readyReplicas": ready,
        "availableReplicas": available,
        "currentReplicas": current,
        "updatedReplicas": updated,
        "currentRevision": current_revision,
        "updateRevision": shape.update_revision,
    }
