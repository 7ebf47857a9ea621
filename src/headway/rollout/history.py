"""What a Rollout keeps of its past: `revisionHistoryLimit` ReplicaSets scaled to zero, and
`analysis.successfulRunHistoryLimit` / `unsuccessfulRunHistoryLimit` finished AnalysisRuns
(5 each by default) that are no longer current. Older ones are deleted, as Argo does."""

from __future__ import annotations

from headway.rollout.context import Draft

__all__ = ["reconcile_history"]


def _current_run_names(d: Draft) -> set[str]:
    names = set()
    for holder in (d.status.get("canary") or {}, d.status.get("blueGreen") or {}):
        for entry in holder.values():
            if isinstance(entry, dict) and entry.get("name"):
                names.add(str(entry["name"]))
    return names | {str(run["metadata"]["name"]) for run in d.create_runs}


def reconcile_history(d: Draft) -> None:
    ctx, spec = d.ctx, d.ctx.rollout.spec
    idle = [
        rs
        for rs in ctx.sets.others
        if rs.replicas == 0 and rs.status_replicas == 0 and d.scales.get(rs.name, 0) == 0
    ]
    d.delete_replica_sets.extend(rs.name for rs in idle[spec.revision_history_limit :])
    current = _current_run_names(d)
    finished = sorted(
        (r for r in ctx.runs if r.completed and r.name not in current),
        key=lambda r: (r.created, r.name),
        reverse=True,
    )
    passed = [r.name for r in finished if r.phase == "Successful"]
    other = [r.name for r in finished if r.phase != "Successful"]
    d.delete_runs.extend(passed[spec.analysis.successful_run_history_limit :])
    d.delete_runs.extend(other[spec.analysis.unsuccessful_run_history_limit :])
