"""Ordering and health: sync waves that deadlock or gate nothing, and CRD versions.

Argo CD applies one wave at a time and starts the next only when every resource of the
current wave is healthy (seed 002, §5.2; seed 000, "Let Argo CD Establish the Prerequisites").
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import cast

import yaml

from headway.check import rollout_refs
from headway.check.context import AppUnit, CheckContext
from headway.check.findings import Finding, Rule, Severity, finding_at
from headway.check.known_health import BUILTIN_HEALTH_KINDS, is_custom_group
from headway.check.manifest import (
    WAVE_ANNOTATION,
    annotation,
    as_dict,
    as_list,
    group_of,
    labels_of,
    name_of,
    pod_template,
    selector_matches,
)
from headway.model import yamlload
from headway.model.yamlload import Document, format_path

__all__ = [
    "CRD_VERSION_REMOVED",
    "INDEFINITE_PAUSE_GATE",
    "UNASSESSED_CUSTOM_KIND",
    "WAVE_BEFORE_TARGET",
    "check_crd_versions",
    "check_indefinite_pause_gate",
    "check_unassessed_custom_kind",
    "check_wave_before_target",
    "lua_health_kinds",
]

WAVE_BEFORE_TARGET = Rule(
    id="HW101",
    slug="wave-before-target",
    severity=Severity.ERROR,
    title="A resource whose health depends on another is not in a later sync wave",
    rationale="Seed 002 §5.2: an HPA in wave 0 with its Deployment in wave 1 deadlocked the "
    "first install of a new service; the same holds for PDBs, ServiceMonitors, KEDA objects.",
    hint="Put the dependent resource in a strictly later sync wave than its target "
    "(argocd.argoproj.io/sync-wave), and leave a comment saying why.",
)
UNASSESSED_CUSTOM_KIND = Rule(
    id="HW102",
    slug="custom-kind-without-health",
    severity=Severity.WARNING,
    title="A custom resource with no health assessment sits in a wave later waves wait on",
    rationale="Seed 000: waves are gates only through health; a kind with no health check is "
    "Healthy as soon as it exists, so the next wave starts before its controller reconciled it.",
    hint="Add a Lua health check (resource.customizations.health.<group>_<Kind> in argocd-cm) "
    "or move the resource to the last wave.",
)
INDEFINITE_PAUSE_GATE = Rule(
    id="HW103",
    slug="indefinite-pause-gate",
    severity=Severity.WARNING,
    title="A Rollout that pauses indefinitely sits in a wave later waves wait on",
    rationale="A Rollout on `pause: {}` (or blue-green without auto-promotion) stays Suspended "
    "until a person promotes it; Argo CD holds every later wave until then.",
    hint="Give the pause a duration, or move the Rollout to the last sync wave.",
)
CRD_VERSION_REMOVED = Rule(
    id="HW104",
    slug="crd-version-removed",
    severity=Severity.ERROR,
    title="A CRD stops serving a version that objects or stored data still use",
    rationale="Seed 000, expand and contract: remove an API version only after every object "
    "moved off it and stored objects were migrated.",
    hint="Keep the old version served until every manifest and stored object uses the new one "
    "(expand first, contract in a later change).",
)

_SCALE_TARGET_KINDS = ("HorizontalPodAutoscaler", "ScaledObject", "VerticalPodAutoscaler")
_WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "Rollout", "ReplicaSet")
# Kinds whose readiness waits on another object named in one reference field.
_NAMED_REFERENCES = {
    "Certificate": ("issuerRef", "Issuer"),  # cert-manager: not Ready until its issuer is
    "ExternalSecret": ("secretStoreRef", "SecretStore"),  # external-secrets: needs its store
}
# Every kind `_targets` finds targets for: the others are passed over without reading them.
_DEPENDENT_KINDS = frozenset(
    {*_SCALE_TARGET_KINDS, "PodDisruptionBudget", "PodMonitor", "ServiceMonitor", "Rollout"}
    | _NAMED_REFERENCES.keys()
)


def _targets(doc: Document, unit: AppUnit) -> Iterator[tuple[Document, str]]:
    """The resources `doc`'s health depends on, with the field that names each."""
    kind = doc.kind
    if kind not in _DEPENDENT_KINDS:
        return
    spec = as_dict(as_dict(doc.obj).get("spec"))
    if kind in _SCALE_TARGET_KINDS:
        ref = as_dict(spec.get("scaleTargetRef") or spec.get("targetRef"))
        target = unit.find(str(ref.get("kind") or "Deployment"), str(ref.get("name", "")))
        if target is not None:
            yield target, "spec.scaleTargetRef"
    elif kind in {"PodDisruptionBudget", "PodMonitor"}:
        selector = spec.get("selector")
        for workload in unit.of_kind(*_WORKLOAD_KINDS):
            if selector_matches(selector, labels_of(pod_template(workload.obj))):
                yield workload, "spec.selector"
    elif kind == "ServiceMonitor":
        for service in unit.of_kind("Service"):
            if selector_matches(spec.get("selector"), labels_of(service.obj)):
                yield service, "spec.selector"
    elif kind == "Rollout":
        yield from _rollout_targets(spec, unit)
    else:
        field, default_kind = _NAMED_REFERENCES[kind]
        ref = as_dict(spec.get(field))
        target = unit.find(str(ref.get("kind") or default_kind), str(ref.get("name", "")))
        if target is not None:
            yield target, f"spec.{field}"


def _rollout_targets(spec: dict[str, object], unit: AppUnit) -> Iterator[tuple[Document, str]]:
    """The workload and Services a Rollout's health waits for (its routes it does not)."""
    for ref in rollout_refs.rollout_references(spec):
        if ref.role not in ("workload", "service"):
            continue
        target = unit.find(ref.kind, ref.name)
        if target is not None:
            yield target, ".".join(map(str, ref.path))


def check_wave_before_target(ctx: CheckContext) -> Iterable[Finding]:
    assessed = _assessed_kinds(ctx)
    for kind in sorted(_DEPENDENT_KINDS):  # the others depend on nothing `_targets` knows
        for unit, doc in ctx.units_of_kind(kind):
            for target, field in _targets(doc, unit):
                if target is doc:
                    continue
                finding = _wave_finding(doc, target, field=field, unit=unit, assessed=assessed)
                if finding is not None:
                    yield finding


def _kind_key(doc: Document) -> str:
    return f"{group_of(as_dict(doc.obj).get('apiVersion'))}/{doc.kind}"


def _assessed_kinds(ctx: CheckContext) -> frozenset[str]:
    return BUILTIN_HEALTH_KINDS | ctx.custom_health | lua_health_kinds(ctx)


def _wave_finding(
    doc: Document, target: Document, *, field: str, unit: AppUnit, assessed: frozenset[str]
) -> Finding | None:
    mine, theirs, app = unit.wave_of(doc), unit.wave_of(target), unit.name
    if mine >= theirs:
        # Later waves wait on this one, not the reverse: in the same wave Argo CD applies the
        # dependent with its target and their health converges together (a Rollout beside its
        # Services, an HPA beside its Deployment) — nothing to report.
        return None
    gated = _kind_key(doc) in assessed  # a health check makes the wave a gate
    who, what = f"{doc.kind}/{doc.name}", f"{target.kind}/{target.name}"
    where = ("metadata", "annotations", WAVE_ANNOTATION)
    if gated:
        message = (
            f"{who} is in sync wave {mine} but its target {what} ({field}) is in wave "
            f"{theirs}: on a first install Argo CD waits for wave {mine} to be healthy, {who} "
            f"stays unhealthy while {what} does not exist, and wave {theirs} is never "
            "applied — the sync deadlocks"
        )
        return finding_at(WAVE_BEFORE_TARGET, doc, path=where, message=message, app=app)
    message = (
        f"{who} is in sync wave {mine}, before its target {what} ({field}) in wave "
        f"{theirs}: it guards nothing until the target exists, and the day a health check "
        f"is added for {doc.kind} (a Lua script, a newer Argo CD) the first install "
        "deadlocks"
    )
    return finding_at(
        WAVE_BEFORE_TARGET, doc, path=where, message=message, app=app, severity=Severity.WARNING
    )


def lua_health_kinds(ctx: CheckContext) -> frozenset[str]:
    """`group/Kind` keys given a Lua health check in an `argocd-cm` ConfigMap of the repo
    (found once per run: two rules ask)."""
    key = ("lua_health_kinds",)
    if key not in ctx.derived:
        ctx.derived[key] = _lua_health_kinds(ctx)
    return cast(frozenset[str], ctx.derived[key])


def _lua_health_kinds(ctx: CheckContext) -> frozenset[str]:
    found: set[str] = set()
    for doc in ctx.objects_of_kind("ConfigMap"):
        if name_of(doc.obj) != "argocd-cm":
            continue
        data = as_dict(as_dict(doc.obj).get("data"))
        prefix = "resource.customizations.health."
        for key in data:
            if str(key).startswith(prefix):
                group, _, kind = str(key)[len(prefix) :].rpartition("_")
                found.add(f"{group}/{kind}")
        found.update(_legacy_customizations(data.get("resource.customizations")))
    return frozenset(found)


def _legacy_customizations(text: object) -> set[str]:
    if not isinstance(text, str):
        return set()
    try:
        parsed = yamlload.load_one(text)
    except yaml.YAMLError:
        return set()
    return {str(k) for k, v in as_dict(parsed).items() if "health.lua" in as_dict(v)}


def check_unassessed_custom_kind(ctx: CheckContext) -> Iterable[Finding]:
    known = _assessed_kinds(ctx)
    for unit in ctx.units:
        for doc in unit.objects:
            group = group_of(as_dict(doc.obj).get("apiVersion"))
            if not is_custom_group(group) or f"{group}/{doc.kind}" in known:
                continue
            if annotation(doc.obj, WAVE_ANNOTATION) is None:
                continue  # only a resource deliberately put in an early wave is meant as a gate
            wave, last = unit.wave_of(doc), unit.last_wave
            if wave >= last:
                continue
            message = (
                f"{doc.kind} ({group}) has no health assessment, so Argo CD marks it Healthy "
                f"as soon as it exists: wave {wave} gates nothing, and wave {last} is applied "
                "before any controller has reconciled it"
            )
            where = ("metadata", "annotations", WAVE_ANNOTATION)
            yield finding_at(
                UNASSESSED_CUSTOM_KIND, doc, path=where, message=message, app=unit.name
            )


def check_indefinite_pause_gate(ctx: CheckContext) -> Iterable[Finding]:
    for unit, doc in ctx.units_of_kind("Rollout"):
        path = _indefinite_pause(doc)
        if path is None:
            continue
        wave, last = unit.wave_of(doc), unit.last_wave
        if wave >= last:
            continue
        message = (
            f"Rollout/{doc.name} in wave {wave} waits for a manual promotion "
            f"({format_path(path)}); Argo CD holds waves up to {last} until "
            "someone promotes it, so every update of this Application stalls half-applied"
        )
        yield finding_at(INDEFINITE_PAUSE_GATE, doc, path=path, message=message, app=unit.name)


def _indefinite_pause(doc: Document) -> tuple[str | int, ...] | None:
    strategy = as_dict(as_dict(as_dict(doc.obj).get("spec")).get("strategy"))
    canary = as_dict(strategy.get("canary"))
    for index, raw_step in enumerate(as_list(canary.get("steps"))):
        step = as_dict(raw_step)
        if "pause" in step and as_dict(step.get("pause")).get("duration") in (None, ""):
            return ("spec", "strategy", "canary", "steps", index, "pause")
    blue_green = as_dict(strategy.get("blueGreen"))
    if blue_green and blue_green.get("autoPromotionEnabled") is False:
        return ("spec", "strategy", "blueGreen", "autoPromotionEnabled")
    return None


def _crd_versions(crd: Document) -> dict[str, dict[str, object]]:
    spec = as_dict(as_dict(crd.obj).get("spec"))
    return {
        str(as_dict(v).get("name")): as_dict(v)
        for v in as_list(spec.get("versions"))
        if as_dict(v).get("name")
    }


def _crd_key(crd: Document) -> tuple[str, str]:
    spec = as_dict(as_dict(crd.obj).get("spec"))
    return str(spec.get("group", "")), str(as_dict(spec.get("names")).get("kind", ""))


def _served(crd: Document) -> set[str]:
    return {name for name, v in _crd_versions(crd).items() if v.get("served") is not False}


def check_crd_versions(ctx: CheckContext) -> Iterable[Finding]:
    crds = {_crd_key(d): d for d in ctx.objects_of_kind("CustomResourceDefinition")}
    for unit in ctx.units if crds else ():
        for doc in unit.objects:
            api_version = str(as_dict(doc.obj).get("apiVersion", ""))
            crd = crds.get((group_of(api_version), doc.kind))
            version = api_version.rpartition("/")[2]
            if crd is None or version in _served(crd):
                continue
            served = ", ".join(sorted(_served(crd))) or "none"
            message = (
                f"{doc.kind}/{doc.name} is written as {api_version}, which "
                f"CustomResourceDefinition/{crd.name} no longer serves (served: {served}): the "
                "apply is rejected and every later wave of this sync waits"
            )
            yield finding_at(
                CRD_VERSION_REMOVED, doc, path=("apiVersion",), message=message, app=unit.name
            )
    yield from _removed_since_base(ctx, crds)


def _removed_since_base(
    ctx: CheckContext, crds: dict[tuple[str, str], Document]
) -> Iterator[Finding]:
    for base in ctx.base_crds:
        head = crds.get(_crd_key(base))
        if head is None:
            continue
        base_versions = _crd_versions(base)
        for name in sorted(_served(base) - _served(head)):
            was_storage = base_versions.get(name, {}).get("storage") is True
            if was_storage:
                message = (
                    f"CustomResourceDefinition/{head.name} drops {name}, its storage version "
                    "at the base revision: objects stored as that version cannot be read back, "
                    "and the API server refuses the update while status.storedVersions lists it"
                )
                yield finding_at(
                    CRD_VERSION_REMOVED, head, path=("spec", "versions"), message=message
                )
            else:
                message = (
                    f"CustomResourceDefinition/{head.name} stops serving {name} in this change: "
                    "any controller or client still writing that version breaks before its own "
                    "upgrade lands (contract only after consumers moved)"
                )
                yield finding_at(
                    CRD_VERSION_REMOVED,
                    head,
                    path=("spec", "versions"),
                    message=message,
                    severity=Severity.WARNING,
                )
