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

A template whose pods are not all available within `progressDeadlineSeconds` (600 by
default) of its last progress (any change in its replica counts restarts the clock) fails the
experiment: "Template '<name>' exceeded its progressDeadlineSeconds (<n>)". The runs get the
experiment's `dryRun` and `measurementRetention` and the labels and annotations of its
`analysisRunMetadata`.

When it ends its runs still running are terminated; each template ReplicaSet is stamped with a
`scale-down-deadline` `scaleDownDelaySeconds` (30 by default) ahead and scaled to zero when that
passes (at once for 0).
A template with `service` gets a Service for its pods (`headway.rollout.experiment_services`).
The status carries `phase`, `message`, `availableAt`, `templateStatuses` (name, replicas,
updatedReplicas, readyReplicas, availableReplicas, status, podTemplateHash, serviceName,
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
from headway.rollout.experiment_services import ServicePlan, plan_template_services
from headway.rollout.replica_sets import HASH_LABEL, ReplicaSetView
from headway.rollout.runs import RunView

__all__ = ["ExperimentPlan", "decide_experiment", "experiment_replica_set", "template_hash"]

_WORSE = ("Successful", "Inconclusive", "Error", "Failed")  # in order of badness
_FINISHED = ("Successful", "Failed", "Error", "Inconclusive")
DEFAULT_PROGRESS_DEADLINE_SECONDS = 600  # as Argo Rollouts' experiment default
DEFAULT_SCALE_DOWN_DELAY_SECONDS = 30


@dataclass(frozen=True)
class ExperimentPlan:
    status: dict[str, Any]
    create_sets: tuple[dict[str, Any], ...] = ()
    scales: Mapping[str, int] = field(default_factory=dict)  # ReplicaSet name -> replicas
    deadlines: Mapping[str, str] = field(default_factory=dict)  # ReplicaSet -> scale-down time
    create_runs: tuple[dict[str, Any], ...] = ()
    terminate_runs: tuple[str, ...] = ()
    create_services: tuple[dict[str, Any], ...] = ()
    delete_services: tuple[str, ...] = ()
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
    spec = exp.get("spec") or {}
    metadata = spec.get("analysisRunMetadata") or {}
    request = RunRequest(rollout_type="Experiment", step_index=None, templates=(ref,), args=args,
                         dry_run=tuple(spec.get("dryRun") or ()),
                         measurement_retention=tuple(spec.get("measurementRetention") or ()),
                         labels={}, annotations={})
    run = build_analysis_run(request, rollout=exp, templates=templates,
                             name=_run_name(exp, analysis), stable_hash="", current_hash="",
                             revision=0)
    meta = run["metadata"]
    meta["ownerReferences"] = [owner_reference(exp)]
    meta["labels"] = {**(metadata.get("labels") or {}), "experiment": exp["metadata"]["name"],
                      "rollout-type": "Experiment"}
    meta["annotations"] = dict(metadata.get("annotations") or {})
    return run


def _progress_since(before: Mapping[str, Any], rs: ReplicaSetView | None,
                    now: datetime) -> datetime:
    """When a template last made progress: a change in its replica counts restarts the clock."""
    counts = (rs.status_replicas, rs.ready, rs.available) if rs else (0, 0, 0)
    previous = (before.get("replicas", 0), before.get("readyReplicas", 0),
                before.get("availableReplicas", 0))
    stamp = parse_time(before.get("lastTransitionTime"))
    return stamp if stamp is not None and counts == previous else now


def _progress_deadline(spec: Mapping[str, Any]) -> timedelta:
    seconds = spec.get("progressDeadlineSeconds")
    return timedelta(seconds=seconds if isinstance(seconds, int)
                     else DEFAULT_PROGRESS_DEADLINE_SECONDS)


def _stalled_template(
    exp: Mapping[str, Any], sets: Mapping[str, ReplicaSetView], before: Mapping[str, Any],
    now: datetime,
) -> tuple[str, str] | None:
    """(template, message) for the first template not available within the progress deadline."""
    spec = exp.get("spec") or {}
    deadline = _progress_deadline(spec)
    for t in spec.get("templates") or []:
        rs = sets.get(_set_name(exp, t))
        if rs is not None and rs.available >= int(t.get("replicas", 1)):
            continue
        if now >= _progress_since(before.get(t["name"]) or {}, rs, now) + deadline:
            return t["name"], (f"Template '{t['name']}' exceeded its progressDeadlineSeconds "
                               f"({int(deadline.total_seconds())})")
    return None


def _template_status(
    template: Mapping[str, Any], rs: ReplicaSetView | None, *, state: str, now: datetime,
    before: Mapping[str, Any],
) -> dict[str, Any]:
    since = _progress_since(before, rs, now)
    transition = since if before.get("status") == state else now
    return {
        "name": template["name"],
        "replicas": rs.status_replicas if rs else 0,
        "updatedReplicas": rs.status_replicas if rs else 0,
        "readyReplicas": rs.ready if rs else 0,
        "availableReplicas": rs.available if rs else 0,
        "status": state,
        "podTemplateHash": template_hash(template),
        "lastTransitionTime": format_time(transition),
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
            now: datetime, stalled: tuple[str, str] | None) -> tuple[str, str] | None:
    """(phase, message) when the experiment ends now."""
    if stalled is not None:
        return "Failed", stalled[1]
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
    services: Mapping[str, str] | None = None, taken: frozenset[str] = frozenset(),
) -> ExperimentPlan:
    """One step of the experiment. `services`: template -> the Service it has claimed;
    `taken`: every Service name in the namespace (a template's Service never replaces one)."""
    status = copy.deepcopy(dict(exp.get("status") or {}))
    spec = exp.get("spec") or {}
    templates = list(spec.get("templates") or [])
    if status.get("phase") in _FINISHED:
        idle, deadlines, wait = _wind_down(exp, sets, now)
        gone = _services(exp, sets, services, ending=True, taken=taken)
        _name_services(status.get("templateStatuses") or [], gone)
        return ExperimentPlan(status=status, scales=idle, deadlines=deadlines, requeue_after=wait,
                              delete_services=gone.delete)
    creates = tuple(experiment_replica_set(exp, t) for t in templates
                    if _set_name(exp, t) not in sets)
    available_at = parse_time(status.get("availableAt"))
    everyone_up = all((rs := sets.get(_set_name(exp, t))) is not None
                      and rs.available >= int(t.get("replicas", 1)) for t in templates)
    if available_at is None and everyone_up:
        available_at = now
        status["availableAt"] = format_time(now)
    before = {s.get("name"): s for s in status.get("templateStatuses") or []}
    stalled = _stalled_template(exp, sets, before, now)
    ending = _ending(exp, runs, available_at, now, stalled)
    phase = ending[0] if ending else ("Running" if available_at else "Pending")
    status["phase"], status["message"] = phase, ending[1] if ending else None
    statuses = []
    for t in templates:
        rs, want = sets.get(_set_name(exp, t)), int(t.get("replicas", 1))
        running = rs is not None and rs.available >= want
        state = phase if ending else ("Running" if running else "Progressing")
        entry = _template_status(t, rs, state=state, now=now, before=before.get(t["name"]) or {})
        if stalled is not None and stalled[0] == t["name"]:
            entry["message"] = stalled[1]
        statuses.append(entry)
    status["templateStatuses"] = statuses
    planned = _services(exp, sets, services, ending=ending is not None, taken=taken)
    _name_services(statuses, planned)
    if planned.errors and not ending:
        ending = _service_error(status, planned)
    if ending:
        scales, deadlines, wind_wait = _wind_down(exp, sets, now)
    else:
        scales = {_set_name(exp, t): int(t.get("replicas", 1)) for t in templates}
        deadlines, wind_wait = {}, None
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
    wake = _earliest(_wake(spec, available_at, now, ending), wind_wait,
                     None if ending else _stall_wake(exp, sets, before, now))
    clean = {k: v for k, v in status.items() if v is not None}
    return ExperimentPlan(status=clean, create_sets=creates, scales=scales, deadlines=deadlines,
                          create_runs=tuple(create_runs), terminate_runs=terminate,
                          create_services=planned.create, delete_services=planned.delete,
                          requeue_after=wake)


def _services(exp: Mapping[str, Any], sets: Mapping[str, ReplicaSetView],
              claimed: Mapping[str, str] | None, *, ending: bool,
              taken: frozenset[str]) -> ServicePlan:
    templates = (exp.get("spec") or {}).get("templates") or []
    return plan_template_services(
        exp, sets={t["name"]: sets.get(_set_name(exp, t)) for t in templates},
        claimed=claimed or {}, hashes={t["name"]: template_hash(t) for t in templates},
        wanted={t["name"]: 0 if ending else int(t.get("replicas", 1)) for t in templates},
        owner_reference=owner_reference(exp), taken=taken)


def _service_error(status: dict[str, Any], planned: ServicePlan) -> tuple[str, str]:
    """A Service that cannot be created ends the experiment in Error, naming it."""
    ending = ("Error", next(iter(planned.errors.values())))
    status["phase"], status["message"] = ending
    for entry in status["templateStatuses"]:
        if entry["name"] in planned.errors:
            entry["status"], entry["message"] = "Error", planned.errors[entry["name"]]
    return ending


def _name_services(statuses: list[dict[str, Any]], planned: ServicePlan) -> None:
    """`serviceName` on each template status while its Service exists."""
    for entry in statuses:
        name = planned.names.get(str(entry.get("name")))
        if name:
            entry["serviceName"] = name
        else:
            entry.pop("serviceName", None)


def _wind_down(exp: Mapping[str, Any], sets: Mapping[str, ReplicaSetView],
               now: datetime) -> tuple[dict[str, int], dict[str, str], float | None]:
    """Scale-downs due now, deadlines to stamp, and the wait until the next deadline."""
    spec = exp.get("spec") or {}
    raw = spec.get("scaleDownDelaySeconds")
    delay = raw if isinstance(raw, int) else DEFAULT_SCALE_DOWN_DELAY_SECONDS
    scales: dict[str, int] = {}
    deadlines: dict[str, str] = {}
    waits: list[float] = []
    for t in spec.get("templates") or []:
        name = _set_name(exp, t)
        rs = sets.get(name)
        if rs is None or not rs.replicas:
            continue
        due = rs.scale_down_deadline
        if delay <= 0 or (due is not None and now >= due):
            scales[name] = 0
        elif due is None:
            deadlines[name] = format_time(now + timedelta(seconds=delay))
            waits.append(float(delay))
        else:
            waits.append((due - now).total_seconds())
    return scales, deadlines, min(waits, default=None)


def _stall_wake(exp: Mapping[str, Any], sets: Mapping[str, ReplicaSetView],
                before: Mapping[str, Any], now: datetime) -> float | None:
    """Seconds until the earliest progress deadline of a template still coming up."""
    spec = exp.get("spec") or {}
    deadline = _progress_deadline(spec)
    waits = [(_progress_since(before.get(t["name"]) or {}, rs, now) + deadline - now)
             .total_seconds()
             for t in spec.get("templates") or []
             if (rs := sets.get(_set_name(exp, t))) is None
             or rs.available < int(t.get("replicas", 1))]
    return max(0.0, min(waits)) if waits else None


def _earliest(*waits: float | None) -> float | None:
    present = [w for w in waits if w is not None]
    return min(present) if present else None


def _wake(spec: Mapping[str, Any], available_at: datetime | None, now: datetime,
          ending: tuple[str, str] | None) -> float | None:
    if ending or available_at is None or not spec.get("duration"):
        return None
    end = available_at + (_duration(spec) or timedelta(0))
    return max(0.0, (end - now).total_seconds())


def _duration(spec: Mapping[str, Any]) -> timedelta | None:
    value = spec.get("duration")
    return timedelta(seconds=parse_duration(value)) if value not in (None, "") else None
