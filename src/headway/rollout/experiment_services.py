"""The Services of an Experiment's templates, decided. Purely computational.

As Argo Rollouts' experiment controller does (`experiments/experiment.go`,
`createTemplateService` / `deleteTemplateService`; `experiments/service.go`): a template with
`service` set (the Rollout sets `service: {}` on every experiment-step template that has a
`weight`) gets a Service once its ReplicaSet exists and the template wants pods. It is named
`service.name`, else `<experiment>-<template>` (the name Argo gives the template's ReplicaSet);
it selects the ReplicaSet's labels (the pod template's labels plus
`rollouts-pod-template-hash`); it has one port per container port (`protocol`,
`port` = `targetPort` = the container port, and the port's `name` when it has one) and no
Service at all when the containers declare no port; it is owned by the Experiment (a
controller reference, so it goes with the Experiment) and annotated
`experiment.argoproj.io/name` and `experiment.argoproj.io/template-name`, which is how a
Service is claimed for its template. Once the experiment no longer wants the template's pods
(it ended, or the template has `replicas: 0`) the Service is deleted as soon as the
ReplicaSet has no available pod left; a claimed Service whose template has no `service` is
deleted at once. A Service of that name that exists and is not this template's is never
touched: the template is in Error ("Failed to create Service ..."), which ends the
experiment in Error, as in Argo. The template's status carries `serviceName` while the
Service exists.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from headway.rollout.replica_sets import HASH_LABEL, ReplicaSetView

__all__ = [
    "EXPERIMENT_NAME_ANNOTATION",
    "TEMPLATE_NAME_ANNOTATION",
    "ServicePlan",
    "claimed_services",
    "plan_template_services",
    "template_service",
]

EXPERIMENT_NAME_ANNOTATION = "experiment.argoproj.io/name"
TEMPLATE_NAME_ANNOTATION = "experiment.argoproj.io/template-name"


@dataclass(frozen=True)
class ServicePlan:
    create: tuple[dict[str, Any], ...]
    delete: tuple[str, ...]  # Service names
    names: Mapping[str, str]  # template -> its Service, while it exists
    errors: Mapping[str, str]  # template -> why its Service cannot be created


def claimed_services(exp: Mapping[str, Any], services: list[Mapping[str, Any]]) -> dict[str, str]:
    """template -> Service name, for the Services this Experiment controls and annotates."""
    meta = exp.get("metadata") or {}
    claimed: dict[str, str] = {}
    for svc in services:
        svc_meta = svc.get("metadata") or {}
        owners = svc_meta.get("ownerReferences") or []
        notes = svc_meta.get("annotations") or {}
        owned = any(r.get("controller") and r.get("uid") == meta.get("uid") for r in owners)
        template = notes.get(TEMPLATE_NAME_ANNOTATION)
        if owned and notes.get(EXPERIMENT_NAME_ANNOTATION) == meta.get("name") and template:
            claimed.setdefault(str(template), str(svc_meta.get("name")))
    return claimed


def _ports(template: Mapping[str, Any]) -> list[dict[str, Any]]:
    pod_spec = (template.get("template") or {}).get("spec") or {}
    ports: list[dict[str, Any]] = []
    for container in pod_spec.get("containers") or []:
        for port in container.get("ports") or []:
            number = port.get("containerPort")
            entry: dict[str, Any] = {"protocol": port.get("protocol") or "TCP", "port": number,
                                     "targetPort": number}
            if port.get("name"):
                entry["name"] = port["name"]
            ports.append(entry)
    return ports


def template_service(
    exp: Mapping[str, Any], template: Mapping[str, Any], *, pod_hash: str,
    owner_reference: Mapping[str, Any],
) -> dict[str, Any] | None:
    """The Service of one template, or None when its containers declare no port."""
    ports = _ports(template)
    if not ports:
        return None
    meta = exp["metadata"]
    name = (template.get("service") or {}).get("name") or f"{meta['name']}-{template['name']}"
    labels = ((template.get("template") or {}).get("metadata") or {}).get("labels") or {}
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": str(name),
            "namespace": meta.get("namespace") or "default",
            "ownerReferences": [dict(owner_reference)],
            "annotations": {EXPERIMENT_NAME_ANNOTATION: meta["name"],
                            TEMPLATE_NAME_ANNOTATION: template["name"]},
        },
        "spec": {"selector": {**labels, HASH_LABEL: pod_hash}, "ports": ports},
    }


def plan_template_services(
    exp: Mapping[str, Any], *, sets: Mapping[str, ReplicaSetView | None],
    claimed: Mapping[str, str], hashes: Mapping[str, str], wanted: Mapping[str, int],
    owner_reference: Mapping[str, Any], taken: frozenset[str] = frozenset(),
) -> ServicePlan:
    """What to create and delete now. `sets`, `hashes` and `wanted` are per template name:
    its ReplicaSet (None before it exists), pod hash and the pods the experiment wants;
    `taken`: the names of the Services already in the namespace."""
    create: list[dict[str, Any]] = []
    delete: list[str] = []
    names: dict[str, str] = {}
    errors: dict[str, str] = {}
    for template in (exp.get("spec") or {}).get("templates") or []:
        name = template["name"]
        rs, existing = sets.get(name), claimed.get(name)
        if template.get("service") is None:
            if existing:
                delete.append(existing)
            continue
        if rs is None:
            continue
        if wanted.get(name, 0) != 0:
            if existing:
                names[name] = existing
            elif (body := template_service(exp, template, pod_hash=hashes[name],
                                           owner_reference=owner_reference)) is not None:
                service = body["metadata"]["name"]
                if service in taken:
                    errors[name] = (f"Failed to create Service {service} for template '{name}': "
                                    f"service {service} already exists and is not owned by "
                                    f"experiment template {name}")
                    continue
                create.append(body)
                names[name] = service
        elif existing and rs.available == 0:
            delete.append(existing)
        elif existing:
            names[name] = existing
    return ServicePlan(create=tuple(create), delete=tuple(delete), names=names, errors=errors)
