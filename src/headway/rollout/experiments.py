"""An Experiment (`argoproj.io/v1alpha1`), decided: `decide_experiment(...) -> ExperimentPlan`.
Purely computational.

As Argo Rollouts runs one: each of `spec.templates` is a ReplicaSet named
`<experiment>-<template>-<hash>` (its pod template and selector carry
`rollouts-pod-template-hash`) with `replicas` pods (1 by default), all side by side. Once
every template has all its pods available the experiment is Running and `status.availableAt`
is set; then each of `spec.analyses` gets an AnalysisRun `<experiment>-<analysis>` built from
its template with the given argument values. It ends:

* Successful once `duration` has passed since `availableAt` (or, without a duration, once every
  analysis marked `requiredForCompletion` is Successful; with neither it runs until
  `spec.terminate`);
* Failed / Error / Inconclusive as soon as one of its runs is (the worst wins), with the
  run's message;
* on `spec.terminate: true`: Successful unless a run already said otherwise.

When it ends its runs still running are terminated and every template is scaled to zero.
The status carries `phase`, `message`, `availableAt`, `templateStatuses` (name, replicas,
updatedReplicas, readyReplicas, availableReplicas, status, podTemplateHash,
lastTransitionTime) and `analysisRuns` (name, analysisRun, phase, message).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from headway.kube.pod_template import pod_template_hash
from headway.kubetime import format_time, parse_time
from headway.model.durations import parse_duration
from headway.model.owned_replica_set import owned_replica_set
from headway.model.rollout_steps import AnalysisTemplateRef, RolloutArgument
from headway.rollout.analysis_runs import AnalysisRunError, RunRequest, build_analysis_run
from headway.rollout.replica_sets import HASH_LABEL, ReplicaSetView
from headway.rollout.runs import RunView

__all__ = ["ExperimentPlan", "decide_experiment", "experiment_replica_set", "template_hash"]

_WORSE = ("Successful", "Inconclusive", "Error", "Failed")  # in order of badness
_FINISHED = ("Successful", "Failed", "Error", "Inconclusive")


@dataclass(frozen=True)
class ExperimentPlan:
    status: dict[str, Any]
    create_sets: tuple[dict[str, Any], ...] = ()
    scales: Mapping[str, int] = field(default_factory=dict)  # ReplicaSet name -> replicas
    create_runs: tuple[dict[str, Any], ...] = ()
    terminate_runs: tuple[str, ...] = ()
    requeue_after: float | None = None


def owner_reference(exp: Mapping[str, Any]) -> dict[str, Any]:
    meta = exp["metadata"]
    return {"apiVersion": exp.get("apiVersion", "argoproj.io/v1alpha1"), "kind": "Experiment",
            "name": meta["name"], "uid": meta.get("uid"), "controller": True,
            "blockOwnerDeletion": True}


def template_hash(template: Mapping[str, Any]) -> str:
    return pod_template_hash(template.get("template") or {}, 0)


def experiment_replica_set(exp: Mapping[str, Any], template: Mapping[str, Any]) -> dict[str, Any]:
    """The ReplicaSet of one template, created at zero pods."""
    owner = {"metadata": {"name": f"{exp['metadata']['name']}-{template['name']}",
                          "namespace": exp["metadata"].get("namespace") or "default"},
             "spec": {"template": template.get("template") or {},
                      "selector": template.get("selector") or {},
                      "minReadySeconds": template.get("minReadySeconds")}}
    return owned_replica_set(owner, hash_label=HASH_LABEL, pod_hash=template_hash(template),
                             replicas=0, annotations={}, owner_reference=owner_reference(exp))


def _set_name(exp: Mapping[str, Any], template: Mapping[str, Any]) -> str:
    return f"{exp['metadata']['name']}-{template['name']}-{template_hash(template)}"


def _run_name(exp: Mapping[str, Any], analysis: Mapping[str, Any]) -> str:
    return f"{exp['metadata']['name']}-{analysis['name']}"


def _analysis_run(
    exp: Mapping[str, Any], analysis: Mapping[str, Any], templates: Mapping[tuple[str, str], Any]
) -> dict[str, Any]:
    ref = AnalysisTemplateRef(str(analysis.get("templateName")),
                              bool(analysis.get("clusterScope")))
    args = tuple(RolloutArgument(str(a.get("name")), None if a.get("value") is None
                                 else str(a["value"]), None)
                 for a in analysis.get("args") or [])
    request = RunRequest(rollout_type="Experiment", step_index=None, templates=(ref,), args=args,
                         dry_run=(), measurement_retention=(), labels={}, annotations={})
    run = build_analysis_run(request, rollout=exp, templates=templates,
                             name=_run_name(exp, analysis), stable_hash="", current_hash="",
                             revision=0)
    meta = run["metadata"]
    meta["ownerReferences"] = [owner_reference(exp)]
    meta["labels"] = {"experiment": exp["metadata"]["name"], "rollout-type": "Experiment"}
    meta["annotations"] = {}
    return run


def _template_status(
    template: Mapping[str, Any], rs: ReplicaSetView | None, *, state: str, now: datetime,
    before: Mapping[str, Any],
) -> dict[str, Any]:
    transition = before.get("lastTransitionTime") if before.get("status") == state else None
    return {
        "name": template["name"],
        "replicas": rs.status_replicas if rs else 0,
        "updatedReplicas": rs.status_replicas if rs else 0,
        "readyReplicas": rs.ready if rs else 0,
        "availableReplicas": rs.available if rs else 0,
        "status": state,
        "podTemplateHash": template_hash(template),
        "lastTransitionTime": transition or format_time(now),
    }


def _worst_run(exp: Mapping[str, Any], runs: Mapping[str, RunView]) -> RunView | None:
    found = [runs[_run_name(exp, a)] for a in (exp.get("spec") or {}).get("analyses") or []
             if _run_name(exp, a) in runs]
    bad = [r for r in found if r.phase in _WORSE[1:]]
    return max(bad, key=lambda r: _WORSE.index(r.phase)) if bad else None


def _required_done(exp: Mapping[str, Any], runs: Mapping[str, RunView]) -> bool:
    required = [a for a in (exp.get("spec") or {}).get("analyses") or []
                if a.get("requiredForCompletion")]
    return bool(required) and all(
        (run := runs.get(_run_name(exp, a))) is not None and run.phase == "Successful"
        for a in required)


def _ending(exp: Mapping[str, Any], runs: Mapping[str, RunView], available_at: datetime | None,
            now: datetime) -> tuple[str, str] | None:
    """(phase, message) when the experiment ends now."""
    worst = _worst_run(exp, runs)
    if worst is not None:
        detail = f": {worst.message}" if worst.message else ""
        return worst.phase, f"AnalysisRun '{worst.name}' phase {worst.phase}{detail}"
    spec = exp.get("spec") or {}
    if spec.get("terminate"):
        return "Successful", "Experiment terminated"
    duration = _duration(spec)
    if available_at is not None and duration is not None and now >= available_at + duration:
        return "Successful", "Experiment completed its duration"
    if duration is None and _required_done(exp, runs):
        return "Successful", "Required analyses completed"
    return None


def decide_experiment(
    exp: Mapping[str, Any], *, sets: Mapping[str, ReplicaSetView], runs: Mapping[str, RunView],
    analysis_templates: Mapping[tuple[str, str], Any], now: datetime,
) -> ExperimentPlan:
    status = copy.deepcopy(dict(exp.get("status") or {}))
    spec = exp.get("spec") or {}
    templates = list(spec.get("templates") or [])
    if status.get("phase") in _FINISHED:
        idle = {_set_name(exp, t): 0 for t in templates
                if (rs := sets.get(_set_name(exp, t))) is not None and rs.replicas}
        return ExperimentPlan(status=status, scales=idle)
    creates = tuple(experiment_replica_set(exp, t) for t in templates
                    if _set_name(exp, t) not in sets)
    available_at = parse_time(status.get("availableAt"))
    everyone_up = all((rs := sets.get(_set_name(exp, t))) is not None
                      and rs.available >= int(t.get("replicas", 1)) for t in templates)
    if available_at is None and everyone_up:
        available_at = now
        status["availableAt"] = format_time(now)
    ending = _ending(exp, runs, available_at, now)
    phase = ending[0] if ending else ("Running" if available_at else "Pending")
    status["phase"], status["message"] = phase, ending[1] if ending else None
    before = {s.get("name"): s for s in status.get("templateStatuses") or []}
    scales: dict[str, int] = {}
    statuses = []
    for t in templates:
        name, want = _set_name(exp, t), 0 if ending else int(t.get("replicas", 1))
        rs = sets.get(name)
        scales[name] = want
        running = rs is not None and rs.available >= want
        state = phase if ending else ("Running" if running else "Progressing")
        statuses.append(_template_status(t, rs, state=state, now=now,
                                         before=before.get(t["name"]) or {}))
    status["templateStatuses"] = statuses
    create_runs: list[dict[str, Any]] = []
    if available_at is not None and not ending:
        for analysis in spec.get("analyses") or []:
            if _run_name(exp, analysis) not in runs:
                try:
                    create_runs.append(_analysis_run(exp, analysis, analysis_templates))
                except AnalysisRunError as err:
                    status["phase"], status["message"] = "Error", str(err)
    status["analysisRuns"] = [
        {"name": a["name"], "analysisRun": _run_name(exp, a),
         "phase": run.phase if (run := runs.get(_run_name(exp, a))) else "Pending",
         **({"message": run.message} if run is not None and run.message else {})}
        for a in spec.get("analyses") or []
    ]
    terminate = tuple(r.name for r in runs.values() if ending and not r.completed)
    wake = _wake(spec, available_at, now, ending)
    clean = {k: v for k, v in status.items() if v is not None}
    return ExperimentPlan(status=clean, create_sets=creates, scales=scales,
                          create_runs=tuple(create_runs), terminate_runs=terminate,
                          requeue_after=wake)


def _wake(spec: Mapping[str, Any], available_at: datetime | None, now: datetime,
          ending: tuple[str, str] | None) -> float | None:
    if ending or available_at is None or not spec.get("duration"):
        return None
    end = available_at + (_duration(spec) or timedelta(0))
    return max(0.0, (end - now).total_seconds())


def _duration(spec: Mapping[str, Any]) -> timedelta | None:
    value = spec.get("duration")
    return timedelta(seconds=parse_duration(value)) if value not in (None, "") else None
