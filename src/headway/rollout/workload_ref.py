"""A Rollout that takes its pods from a Deployment (`spec.workloadRef`). Purely computational.

The migration path from a Deployment to a Rollout, as Argo Rollouts runs it:

* the Rollout's pod template is the Deployment's `spec.template` (its selector too, when
  the Rollout has none), read at every reconcile; an edit of the Deployment's template is a
  new revision of the Rollout, walked through the steps like any other;
* the Deployment's `metadata.generation` is written on the Rollout as the annotation
  `rollout.argoproj.io/workload-generation`, and copied to `status.workloadObservedGeneration`
  once a reconcile has seen it (Argo CD's health waits until both agree);
* `scaleDown` says what happens to the Deployment's own pods, and only while the Rollout is at
  its first revision (the migration): `never` (the default) leaves them; `onsuccess` scales
  the Deployment to zero once the Rollout is Healthy; `progressively` takes one Deployment pod
  away for each Rollout pod that is ready (`spec.replicas - status.readyReplicas`), and gives
  them back when the Rollout's pods stop being ready, then zero once Healthy. Decisions read
  the status as it was before this reconcile, as Argo does.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from headway.rollout.context import RolloutContext

__all__ = [
    "WORKLOAD_GENERATION_ANNOTATION",
    "resolved_rollout",
    "workload_observed_generation",
    "workload_replicas",
]

WORKLOAD_GENERATION_ANNOTATION = "rollout.argoproj.io/workload-generation"


def resolved_rollout(rollout: Mapping[str, Any], workload: Mapping[str, Any]) -> dict[str, Any]:
    """The Rollout as its decisions read it: the workload's template (and selector) filled in."""
    resolved = copy.deepcopy(dict(rollout))
    spec = resolved.setdefault("spec", {})
    workload_spec = workload.get("spec") or {}
    spec["template"] = copy.deepcopy(workload_spec.get("template") or {})
    if spec.get("selector") is None and workload_spec.get("selector") is not None:
        spec["selector"] = copy.deepcopy(workload_spec["selector"])
    return resolved


def workload_observed_generation(ctx: RolloutContext) -> str | None:
    """`status.workloadObservedGeneration`: the workload generation this reconcile saw."""
    if ctx.rollout.spec.workload_ref is None:
        return None
    annotations = (ctx.obj.get("metadata") or {}).get("annotations") or {}
    seen = annotations.get(WORKLOAD_GENERATION_ANNOTATION)
    return str(seen) if seen is not None else None


def workload_replicas(ctx: RolloutContext, *, new_replicas: int) -> int | None:
    """The replicas the referenced Deployment should have now, or None to leave it alone.

    `new_replicas` is what this reconcile scales the Rollout's first ReplicaSet to; while it
    shrinks (a failing migration) the Deployment is given its pods back even with none of the
    Rollout's ready."""
    ref = ctx.rollout.spec.workload_ref
    new = ctx.sets.new
    if ref is None or new is None or new.revision != 1:
        return None
    healthy = ctx.status.get("phase") == "Healthy"
    if ref.scale_down == "onsuccess":
        return 0 if healthy else None
    if ref.scale_down != "progressively":
        return None
    if healthy:
        return 0
    ready = _int(ctx.status.get("readyReplicas"))
    if ready > 0 or new.replicas > new_replicas:
        return max(0, ctx.rollout.spec.replicas - ready)
    return None


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
