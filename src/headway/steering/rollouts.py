"""What `headway rollouts promote|abort|retry|pause|restart|set image|undo` change, as the
`kubectl argo rollouts` plugin changes them.

* promote: unpause (`spec.paused: false`) and clear `status.pauseConditions`; when there
  was no pause condition, skip the current canary step (`status.currentStepIndex + 1`);
  `--full`: `status.promoteFull: true` (skips every remaining step and analysis). Unlike
  the plugin, promoting after an Inconclusive analysis only clears the pause, so the
  controller runs the analysis again instead of skipping the step; an aborted rollout is
  refused (promote would do nothing there) with a pointer to `retry`; and a rollout whose
  current revision has a Failed or Errored run is refused whatever `status.abort` says
  (`headway.rollout.run_evidence`), checked again on the Rollout read that the write is
  conditioned on.
* abort: `status.abort: true`; retry: `status.abort: false`.
* pause: `spec.paused: true`; restart: `spec.restartAt` = now.
* set image: the container's image in `spec.template` (refused for a Rollout whose template
  is a Deployment's, `workloadRef`: the image is changed there).
* undo: `spec.template` becomes the template of revision N (default: the one before the
  current), without what the controller wrote into that ReplicaSet's template (hash label,
  per-role metadata, anti-affinity term); with that ReplicaSet still around the controller
  fast-tracks to it. With a `workloadRef`, the Deployment's template is restored instead.

Status edits are read-modify-write with the resourceVersion as a precondition, retried on a
conflict with the controller's own write; spec edits replace the object's spec the same way.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from datetime import datetime
from typing import Any

from headway.cluster.errors import Conflict
from headway.cluster.protocol import Cluster
from headway.kubetime import format_time
from headway.model.obj import Obj
from headway.rollout.anti_affinity import without_injected_terms
from headway.rollout.pod_metadata import NO_METADATA, injected_metadata, synced_metadata
from headway.rollout.replica_sets import HASH_LABEL, view_of

__all__ = [
    "ARGO_API",
    "RolloutCommandError",
    "abort",
    "pause",
    "promote",
    "restart",
    "retry",
    "set_image",
    "undo",
]

ARGO_API = "argoproj.io/v1alpha1"
FIELD_MANAGER = "headway-rollouts-cli"
_ATTEMPTS = 5


class RolloutCommandError(Exception):
    """A command that cannot be carried out; the message says why."""


def _get(cluster: Cluster, namespace: str, name: str) -> Obj:
    return cluster.get(ARGO_API, "Rollout", name, namespace)


def _edit_status(
    cluster: Cluster,
    namespace: str,
    name: str,
    change: Callable[[Obj, dict[str, Any]], None],
    *,
    before_write: Callable[[], None] | None = None,
) -> Obj:
    for _ in range(_ATTEMPTS):
        ro = _get(cluster, namespace, name)
        status = copy.deepcopy(ro.get("status") or {})
        change(ro, status)
        if before_write is not None:
            before_write()
        try:
            return cluster.patch_status(
                ARGO_API,
                "Rollout",
                name,
                namespace,
                status,
                resource_version=ro["metadata"].get("resourceVersion"),
            )
        except Conflict:
            continue
    raise RolloutCommandError(f"rollout {namespace}/{name} kept changing; try again")


def _edit_spec(
    cluster: Cluster, namespace: str, name: str, change: Callable[[dict[str, Any]], None]
) -> Obj:
    for _ in range(_ATTEMPTS):
        ro = _get(cluster, namespace, name)
        body = {k: copy.deepcopy(ro[k]) for k in ("apiVersion", "kind", "metadata", "spec")}
        change(body["spec"])
        body["metadata"].pop("managedFields", None)
        try:
            update = getattr(cluster, "update", None)
            if callable(update):
                result: Obj = update(body, field_manager=FIELD_MANAGER)
                return result
            return cluster.apply(body, field_manager=FIELD_MANAGER, force=True)
        except Conflict:
            continue
    raise RolloutCommandError(f"rollout {namespace}/{name} kept changing; try again")


def _refuse_without_evidence(cluster: Cluster, ro: Obj, *, full: bool) -> None:
    """Raise when the rollout's runs forbid a promote (see `run_evidence`)."""
    from headway.controllers.rollout.inputs import owned_runs
    from headway.rollout.run_evidence import promotion_refusal
    from headway.rollout.runs import run_view_of
    meta = ro["metadata"]
    if (ro.get("status") or {}).get("abort"):
        raise RolloutCommandError(f"rollout '{meta['name']}' is aborted; use `retry` first")
    views = [run_view_of(r) for r in owned_runs(cluster, ro)]
    refusal = promotion_refusal(ro.get("status") or {}, views, full=full)
    if refusal is not None:
        raise RolloutCommandError(f"rollout '{meta['name']}' not promoted: {refusal}")


def promote(
    cluster: Cluster,
    namespace: str,
    name: str,
    *,
    full: bool = False,
    before_write: Callable[[], None] | None = None,
) -> str:
    """`before_write` is a test hook: it runs between the last check of the runs and the
    status write, to widen that window on purpose."""
    ro = _get(cluster, namespace, name)
    _refuse_without_evidence(cluster, ro, full=full)
    if ro["spec"].get("paused"):
        _edit_spec(cluster, namespace, name, lambda spec: spec.update(paused=False))
    if full:
        status = ro.get("status") or {}
        if status.get("currentPodHash") != status.get("stableRS"):

            def full_promotion(current: Obj, st: dict[str, Any]) -> None:
                _refuse_without_evidence(cluster, current, full=True)
                st.update(promoteFull=True)

            _edit_status(cluster, namespace, name, full_promotion, before_write=before_write)
        return f"rollout '{name}' fully promoted"

    def step(current: Obj, status: dict[str, Any]) -> None:
        # read again with the Rollout this write is conditioned on: a run may have failed
        _refuse_without_evidence(cluster, current, full=False)
        if status.get("pauseConditions"):
            del status["pauseConditions"]
            return
        canary = (current["spec"].get("strategy") or {}).get("canary")
        steps = (canary or {}).get("steps") or []
        index = int(status.get("currentStepIndex") or 0)
        if canary is not None and index < len(steps):
            status["currentStepIndex"] = index + 1

    _edit_status(cluster, namespace, name, step, before_write=before_write)
    return f"rollout '{name}' promoted"


def abort(cluster: Cluster, namespace: str, name: str) -> str:
    _edit_status(cluster, namespace, name, lambda _ro, st: st.update(abort=True))
    return f"rollout '{name}' aborted"


def retry(cluster: Cluster, namespace: str, name: str) -> str:
    _edit_status(cluster, namespace, name, lambda _ro, st: st.update(abort=False))
    return f"rollout '{name}' retried"


def pause(cluster: Cluster, namespace: str, name: str) -> str:
    _edit_spec(cluster, namespace, name, lambda spec: spec.update(paused=True))
    return f"rollout '{name}' paused"


def restart(cluster: Cluster, namespace: str, name: str, *, now: datetime) -> str:
    _edit_spec(cluster, namespace, name, lambda spec: spec.update(restartAt=format_time(now)))
    return f"rollout '{name}' restarts"


def _workload_name(ro: Obj) -> str | None:
    ref = (ro.get("spec") or {}).get("workloadRef")
    return str(ref.get("name")) if isinstance(ref, dict) else None


def set_image(cluster: Cluster, namespace: str, name: str, *, container: str, image: str) -> str:
    workload = _workload_name(_get(cluster, namespace, name))
    if workload is not None:
        raise RolloutCommandError(
            f"rollout '{name}' takes its pod template from Deployment '{workload}' "
            f"(workloadRef): change the image there, e.g. "
            f"kubectl set image deployment/{workload} {container}={image}"
        )

    def change(spec: dict[str, Any]) -> None:
        pod = (spec.get("template") or {}).get("spec") or {}
        found = [c for c in pod.get("containers") or [] if c.get("name") == container]
        if not found:
            names = ", ".join(c.get("name", "") for c in pod.get("containers") or [])
            raise RolloutCommandError(f"no container '{container}' (containers: {names})")
        found[0]["image"] = image

    _edit_spec(cluster, namespace, name, change)
    return f"rollout '{name}' image updated"


def undo(cluster: Cluster, namespace: str, name: str, *, to_revision: int | None = None) -> str:
    ro = _get(cluster, namespace, name)
    uid = ro["metadata"].get("uid")
    sets = [
        rs
        for rs in cluster.list("apps/v1", "ReplicaSet", namespace=namespace)
        if any(r.get("uid") == uid for r in rs["metadata"].get("ownerReferences") or [])
    ]
    by_revision = sorted(sets, key=lambda rs: view_of(rs).revision, reverse=True)
    if to_revision is None:
        target = by_revision[1] if len(by_revision) > 1 else None
    else:
        target = next((rs for rs in sets if view_of(rs).revision == to_revision), None)
    if target is None:
        wanted = "no previous revision" if to_revision is None else f"no revision {to_revision}"
        raise RolloutCommandError(f"rollout '{name}' has {wanted}")
    template = restorable_template(target)
    workload = _workload_name(ro)
    if workload is not None:
        _edit_workload_template(cluster, namespace, workload, template)
    else:
        _edit_spec(cluster, namespace, name, lambda spec: spec.update(template=template))
    return f"rollout '{name}' rolled back to revision {view_of(target).revision}"


def restorable_template(rs: Obj) -> dict[str, Any]:
    """The pod template a ReplicaSet was made from: without its hash label, the per-role
    metadata and the anti-affinity term the controller wrote into it, so the Rollout's
    template hashes to that ReplicaSet again and the controller fast-tracks to it."""
    template: dict[str, Any] = copy.deepcopy(rs["spec"]["template"])
    injected = injected_metadata(rs["metadata"].get("annotations") or {})
    meta = template.get("metadata") or {}
    meta = synced_metadata(meta, injected=injected, wanted=NO_METADATA) or meta
    meta = {k: v for k, v in meta.items() if v or k not in ("labels", "annotations")}
    meta.get("labels", {}).pop(HASH_LABEL, None)
    template["metadata"] = meta
    template["spec"] = without_injected_terms(template.get("spec") or {})
    return template


def _edit_workload_template(
    cluster: Cluster, namespace: str, name: str, template: dict[str, Any]
) -> None:
    """`undo` of a Rollout with a workloadRef restores the Deployment's template (as the
    plugin does); the Rollout follows it."""
    for _ in range(_ATTEMPTS):
        found = cluster.get("apps/v1", "Deployment", name, namespace)
        body = {k: copy.deepcopy(found[k]) for k in ("apiVersion", "kind", "metadata", "spec")}
        body["metadata"].pop("managedFields", None)
        body["spec"]["template"] = template
        try:
            cluster.update(body, field_manager=FIELD_MANAGER)
            return
        except Conflict:
            continue
    raise RolloutCommandError(f"deployment {namespace}/{name} kept changing; try again")
