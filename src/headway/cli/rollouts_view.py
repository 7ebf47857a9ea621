"""The `headway rollouts get` view: what a Rollout is doing, read from the cluster.

`headway.steering.rollout_summary.summarize()` gathers plain data (the dashboard reads the
same); `render()` lays it out with rich: the status line, the steps with the current one
marked, the weights (for a canary without a router, the real share of pods: "setWeight 10 ->
1 of 4 pods = 25%"), the ReplicaSets with their pods, the AnalysisRuns with each metric's
last measurement, and the current step's Experiment with its templates' ReplicaSets and runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from headway.model.obj import Obj
from headway.rollout.replica_sets import HASH_LABEL, view_of
from headway.steering.rollout_summary import RolloutSummary, summarize, weight_line

__all__ = ["RolloutSummary", "render", "summarize", "weight_line"]

_PHASE_STYLE = {"Healthy": "green", "Progressing": "yellow", "Paused": "cyan", "Degraded": "red"}


def _header(summary: RolloutSummary) -> Table:
    status, meta = summary.status, summary.obj["metadata"]
    table = Table.grid(padding=(0, 2))
    phase = str(status.get("phase") or "Unknown")
    _row(table, "Name:", str(meta["name"]))
    _row(table, "Namespace:", str(meta.get("namespace") or "default"))
    table.add_row("Status:", Text(phase, style=_PHASE_STYLE.get(phase, "")))
    if status.get("message"):
        _row(table, "Message:", str(status["message"]))
    pauses = _pauses(status)
    if pauses:
        _row(table, "  Pauses:", pauses)
    ro = summary.rollout
    strategy = "BlueGreen" if ro and ro.spec.strategy.blue_green else "Canary"
    table.add_row("Strategy:", strategy)
    if ro and ro.spec.strategy.canary and ro.spec.strategy.canary.steps:
        table.add_row(
            "  Step:", f"{status.get('currentStepIndex', 0)}/{len(ro.spec.strategy.canary.steps)}"
        )
    line = weight_line(summary)
    if line:
        _row(table, "  Weight:", line)
    blue_green = status.get("blueGreen") or {}
    for label, key in (("  Active:", "activeSelector"), ("  Preview:", "previewSelector")):
        if blue_green.get(key):
            _row(table, label, str(blue_green[key]))
    table.add_row(
        "Replicas:",
        "  ".join(
            f"{label}: {status.get(key, 0)}"
            for label, key in (
                ("Current", "replicas"),
                ("Updated", "updatedReplicas"),
                ("Ready", "readyReplicas"),
                ("Available", "availableReplicas"),
            )
        ),
    )
    return table


def _row(table: Table, label: str, value: str) -> None:
    """A header row whose value is printed as written (a status message or a measurement
    may hold `[...]`, which Rich would read as markup in a plain string)."""
    table.add_row(label, Text(value))


def _pauses(status: Mapping[str, Any]) -> str:
    """Every pause condition holding the rollout, with when it began: a step's pause and an
    inconclusive analysis can hold it at once, and both need a decision."""
    found = [p for p in status.get("pauseConditions") or [] if isinstance(p, dict)]
    return ", ".join(
        f"{p.get('reason', '?')} (since {p['startTime']})" if p.get("startTime") else
        str(p.get("reason", "?"))
        for p in found
    )


def _steps(summary: RolloutSummary) -> RenderableType | None:
    from headway.rollout.canary_steps import step_label
    ro = summary.rollout
    if ro is None or ro.spec.strategy.canary is None or not ro.spec.strategy.canary.steps:
        return None
    index = int(summary.status.get("currentStepIndex") or 0)
    table = Table(title="Steps", show_header=False, box=None)
    for i, step in enumerate(ro.spec.strategy.canary.steps):
        mark, style = (
            ("✔", "green") if i < index else (("▶", "bold yellow") if i == index else (" ", "dim"))
        )
        table.add_row(Text(mark, style=style), str(i), Text(step_label(step), style=style))
    return table


def _last_measurements(run: Obj) -> str:
    parts = []
    for result in (run.get("status") or {}).get("metricResults") or []:
        measurements = result.get("measurements") or []
        last = measurements[-1] if measurements else {}
        value = last.get("value", "-")
        parts.append(f"{result.get('name')}={value} ({last.get('phase', result.get('phase'))})")
    return ", ".join(parts)


def _tree(summary: RolloutSummary) -> Tree:
    status = summary.status
    tree = Tree(Text(f"Rollout {summary.obj['metadata']['name']}"))
    for rs in summary.replica_sets:
        view = view_of(rs)
        roles = [
            r
            for r, h in (
                ("stable", status.get("stableRS")),
                ("canary", status.get("currentPodHash")),
            )
            if h == view.pod_hash
        ]
        if status.get("stableRS") == status.get("currentPodHash") and roles:
            roles = ["stable"]
        label = (
            f"ReplicaSet {view.name} rev:{view.revision} "
            f"{view.available}/{view.replicas} available {' '.join(roles)}"
        )
        branch = tree.add(Text(label))
        for pod in summary.pods.get(view.name, ()):
            phase = (pod.get("status") or {}).get("phase", "Pending")
            branch.add(Text(f"Pod {pod['metadata']['name']} {phase}"))
        for run in summary.runs:
            if (run["metadata"].get("labels") or {}).get(HASH_LABEL) == view.pod_hash:
                phase = (run.get("status") or {}).get("phase", "Pending")
                branch.add(
                    Text(
                        f"AnalysisRun {run['metadata']['name']} {phase} "
                        f"{_last_measurements(run)}".rstrip()
                    )
                )
    _experiment_branch(tree, summary)
    return tree


def _experiment_branch(tree: Tree, summary: RolloutSummary) -> None:
    """The current step's Experiment: its phase, each template's ReplicaSet, each run."""
    exp = summary.experiment
    if exp is None:
        return
    said = f": {exp.message}" if exp.message else ""
    branch = tree.add(Text(f"Experiment {exp.name} {exp.phase or 'Pending'}{said}"))
    for t in exp.templates:
        where = f"ReplicaSet {t.replica_set}" if t.replica_set else "no ReplicaSet yet"
        branch.add(
            Text(
                f"template {t.template}: {where} {t.available}/{t.replicas} available "
                f"{t.status}".rstrip()
            )
        )
    for r in exp.runs:
        note = f": {r.message}" if r.message else ""
        branch.add(Text(f"AnalysisRun {r.run} ({r.analysis}) {r.phase or 'Pending'}{note}"))


def render(summary: RolloutSummary) -> RenderableType:
    parts: list[RenderableType] = [_header(summary)]
    steps = _steps(summary)
    if steps is not None:
        parts.append(steps)
    parts.append(_tree(summary))
    return Group(*parts)
