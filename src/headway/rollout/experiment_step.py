"""A canary `experiment` step: the Rollout creates an Experiment and waits for it. Purely
computational.

As Argo Rollouts does: the Experiment is named `<rollout>-<pod hash>-<revision>-<step index>`,
owned by the Rollout, labelled `rollouts-pod-template-hash`; each template takes the pod
template (and selector) of the stable or the canary ReplicaSet (`specRef: stable|canary`),
with the step's `metadata` labels added to both; its analyses get the step's arguments
(`value`, or `valueFrom.podTemplateHashValue: Stable|Latest`). It is created once a stable
ReplicaSet exists. A template with a `weight` or a `service` gets `service: {}` (with the
step's `service.name` when given), so the Experiment creates a Service for its pods. While the
step's Experiment is Running, each template with a `weight` is a `WeightDestination` (its
Service, pod hash and weight) the router sends that share to, taken from the stable's share
(`experiment_destinations`, Argo's `calculateWeightDestinationsFromExperiment`). The step
completes when the Experiment is Successful; Failed or Error
aborts the rollout naming it; Inconclusive pauses it (`InconclusiveExperiment`). An
Experiment that is no longer the current step's (the rollout moved on, was aborted, fully
promoted or got a new template) is terminated (`spec.terminate: true`).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from headway.rollout.context import Draft
from headway.rollout.plan import WeightDestination
from headway.rollout.replica_sets import HASH_LABEL, REVISION_ANNOTATION, rollout_owner_reference

__all__ = [
    "INCONCLUSIVE_EXPERIMENT",
    "ExperimentTemplateView",
    "ExperimentView",
    "experiment_destinations",
    "experiment_step_done",
    "experiment_view_of",
    "terminate_experiments",
]

INCONCLUSIVE_EXPERIMENT = "InconclusiveExperiment"
_FINISHED = ("Successful", "Failed", "Error", "Inconclusive")


@dataclass(frozen=True)
class ExperimentTemplateView:
    """One `status.templateStatuses[]` entry: the template's Service (once created) and hash."""

    name: str
    service_name: str
    pod_template_hash: str


@dataclass(frozen=True)
class ExperimentView:
    name: str
    phase: str
    message: str
    terminating: bool
    templates: tuple[ExperimentTemplateView, ...] = ()

    @property
    def finished(self) -> bool:
        return self.phase in _FINISHED


def experiment_view_of(exp: Mapping[str, Any]) -> ExperimentView:
    status = exp.get("status") or {}
    return ExperimentView(
        name=str((exp.get("metadata") or {}).get("name", "")),
        phase=str(status.get("phase") or "Pending"),
        message=str(status.get("message") or ""),
        terminating=bool((exp.get("spec") or {}).get("terminate")),
        templates=tuple(
            ExperimentTemplateView(
                name=str(t.get("name") or ""),
                service_name=str(t.get("serviceName") or ""),
                pod_template_hash=str(t.get("podTemplateHash") or ""),
            )
            for t in status.get("templateStatuses") or []
            if isinstance(t, Mapping)
        ),
    )


def experiment_name(d: Draft, index: int) -> str:
    ctx = d.ctx
    return f"{ctx.name}-{ctx.current_hash}-{ctx.revision}-{index}"


def _template(d: Draft, step_template: Mapping[str, Any]) -> dict[str, Any]:
    ctx = d.ctx
    pod_hash = ctx.stable_hash if step_template.get("specRef") == "stable" else ctx.current_hash
    source = ctx.replica_set_templates.get(pod_hash) or {}
    template = copy.deepcopy(dict(source.get("template") or {}))
    selector = copy.deepcopy(dict(step_template.get("selector") or source.get("selector") or {}))
    extra = ((step_template.get("metadata") or {}).get("labels")) or {}
    meta = template.setdefault("metadata", {})
    meta["labels"] = {**(meta.get("labels") or {}), **extra}
    selector["matchLabels"] = {**(selector.get("matchLabels") or {}), **extra}
    found: dict[str, Any] = {"name": step_template.get("name"), "template": template,
                             "selector": selector}
    if step_template.get("replicas") is not None:
        found["replicas"] = step_template["replicas"]
    if step_template.get("weight") is not None or step_template.get("service") is not None:
        name = (step_template.get("service") or {}).get("name")
        found["service"] = {"name": name} if name else {}
    return found


def _arg(d: Draft, arg: Mapping[str, Any]) -> dict[str, Any]:
    if arg.get("value") is not None:
        return {"name": arg.get("name"), "value": str(arg["value"])}
    which = ((arg.get("valueFrom") or {}).get("podTemplateHashValue"))
    value = d.ctx.stable_hash if which == "Stable" else d.ctx.current_hash
    return {"name": arg.get("name"), "value": value}


def build_experiment(d: Draft, step: Mapping[str, Any], index: int) -> dict[str, Any]:
    ctx = d.ctx
    spec: dict[str, Any] = {
        "templates": [_template(d, t) for t in step.get("templates") or []],
        "analyses": [{**{k: v for k, v in a.items() if k != "args"},
                      "args": [_arg(d, arg) for arg in a.get("args") or []]}
                     for a in step.get("analyses") or []],
    }
    if step.get("duration") is not None:
        spec["duration"] = step["duration"]
    deadline = (ctx.obj.get("spec") or {}).get("progressDeadlineSeconds")
    if deadline is not None:  # the Rollout's, as Argo passes it on
        spec["progressDeadlineSeconds"] = deadline
    for key in ("dryRun", "analysisRunMetadata", "scaleDownDelaySeconds"):
        if step.get(key) is not None:
            spec[key] = copy.deepcopy(step[key])
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Experiment",
        "metadata": {
            "name": experiment_name(d, index),
            "namespace": (ctx.obj.get("metadata") or {}).get("namespace") or "default",
            "labels": {HASH_LABEL: ctx.current_hash},
            "annotations": {REVISION_ANNOTATION: str(ctx.revision)},
            "ownerReferences": [rollout_owner_reference(ctx.obj)],
        },
        "spec": spec,
    }


def experiment_step_done(d: Draft, step: Mapping[str, Any], index: int) -> bool:
    """Create or read the step's Experiment; True once it is Successful."""
    name = experiment_name(d, index)
    canary = d.status.setdefault("canary", {})
    found = next((e for e in d.ctx.experiments if e.name == name), None)
    if found is None:
        if d.ctx.sets.stable is not None:
            d.create_experiments.append(build_experiment(d, step, index))
            canary["currentExperiment"] = name
        return False
    if found.phase == "Successful":
        canary.pop("currentExperiment", None)
        return True
    canary["currentExperiment"] = name
    if found.phase in ("Failed", "Error"):
        detail = f": {found.message}" if found.message else ""
        d.abort(f"Experiment '{name}' phase {found.phase}{detail}")
    elif found.phase == "Inconclusive":
        d.add_pause(INCONCLUSIVE_EXPERIMENT)
    return False


def experiment_destinations(
    d: Draft, step: Mapping[str, Any], index: int
) -> tuple[WeightDestination, ...]:
    """The weighted templates of the step's Experiment while it is Running. A template whose
    Service is not created yet gets no share (Argo would route it to a nameless host)."""
    found = next((e for e in d.ctx.experiments if e.name == experiment_name(d, index)), None)
    if found is None or found.phase != "Running":
        return ()
    weights = {t.get("name"): t.get("weight") for t in step.get("templates") or []}
    return tuple(
        WeightDestination(t.service_name, t.pod_template_hash, int(weights[t.name]))
        for t in found.templates
        if isinstance(weights.get(t.name), int) and t.service_name
    )


def terminate_experiments(d: Draft, *, keep: str | None) -> None:
    """Terminate every running Experiment of this Rollout but `keep`."""
    for exp in d.ctx.experiments:
        if exp.name != keep and not exp.finished and not exp.terminating:
            d.terminate_experiments.append(exp.name)
