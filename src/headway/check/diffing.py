"""`ignoreDifferences` that hides nothing, hides too much, or is missing where Rollouts writes.

Seed 000 "Prevent Git Reconciliation From Fighting Traffic Management"; seed 002 §5.6, §5.7;
seed 003 on selfHeal fighting the canary for `spec.replicas`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from headway.check import argocd_cm_rules
from headway.check.application import sync_policy
from headway.check.context import AppUnit, CheckContext
from headway.check.findings import Finding, Rule, Severity, finding_at
from headway.check.jq_path import normalize_pointer
from headway.check.manifest import as_dict, as_list, group_of, name_of, namespace_of
from headway.check.system_ignore_risk import releases_hidden_by
from headway.model.yamlload import Document
from headway.rollout.route_fields import route_fields

__all__ = [
    "HPA_REPLICAS_SELF_HEAL",
    "IGNORE_MATCHES_NOTHING",
    "IGNORE_TOO_BROAD",
    "IMMUTABLE_IGNORE_NOT_RESPECTED",
    "RESPECT_IGNORE_MISUSED",
    "ROUTER_WEIGHTS_NOT_IGNORED",
    "SYSTEM_IGNORE_HIDES_ROLLOUT",
    "check_hpa_replicas",
    "check_ignore_entries",
    "check_respect_ignore",
    "check_router_weights",
    "check_system_ignores",
]

IGNORE_MATCHES_NOTHING = Rule(
    id="HW304",
    slug="ignore-matches-nothing",
    severity=Severity.WARNING,
    title="An ignoreDifferences entry that matches no rendered resource",
    rationale="Seed 002 §5.6: an entry with no `group` matches only the core group, so "
    "`kind: Deployment` without `group: apps` silently matches nothing.",
    hint="Set `group` (apps, argoproj.io, networking.istio.io...) and check kind/name.",
)
IGNORE_TOO_BROAD = Rule(
    id="HW305",
    slug="ignore-too-broad",
    severity=Severity.WARNING,
    title="An ignoreDifferences entry broader than needed",
    rationale="Seed 000: ignore only the fields the controller legitimately owns; broad "
    "exclusions weaken drift detection and hide unrelated changes.",
    hint="Name the exact field (`/spec/replicas`, `.spec.http[].route[].weight`).",
)
ROUTER_WEIGHTS_NOT_IGNORED = Rule(
    id="HW306",
    slug="router-weights-not-ignored",
    severity=Severity.WARNING,
    title="Route weights managed by a Rollout with no ignore rule",
    rationale="Seed 000: without the rule, Argo CD reapplies static weights while Rollouts "
    "sets dynamic ones, and canary traffic flaps.",
    hint="Add ignoreDifferences for the route weights (or `managedFieldsManagers: "
    "[rollouts-controller]`) with RespectIgnoreDifferences=true.",
)
HPA_REPLICAS_SELF_HEAL = Rule(
    id="HW307",
    slug="hpa-replicas-self-heal",
    severity=Severity.WARNING,
    title="selfHeal fights an HPA for a Rollout's replicas",
    rationale="Seed 003 and seed 002 §5.7: selfHeal snaps spec.replicas back mid-canary; "
    "Argo CD resets the count on every sync.",
    hint="Add ignoreDifferences for `/spec/replicas` on the Rollout (group argoproj.io), or "
    "leave `replicas` out of the manifest.",
)
RESPECT_IGNORE_MISUSED = Rule(
    id="HW308",
    slug="respect-ignore-differences-misused",
    severity=Severity.WARNING,
    title="RespectIgnoreDifferences set globally or with nothing to respect",
    rationale="Seed 002 §3.3, §5.6: enabled globally, it changed client-side apply and "
    "stopped Rollouts from advancing their image. Use it only where needed.",
    hint="Set RespectIgnoreDifferences=true only on Applications with ignore rules that need it.",
)
IMMUTABLE_IGNORE_NOT_RESPECTED = Rule(
    id="HW309",
    slug="immutable-ignore-not-respected",
    severity=Severity.ERROR,
    title="An ignore rule on an immutable field without RespectIgnoreDifferences",
    rationale="Seed 002 §5.6: ignoreDifferences is display-only; every sync patches a bound "
    "PVC's spec.volumeName back to empty and fails.",
    hint="Add `RespectIgnoreDifferences=true` to this Application's syncOptions.",
)

SYSTEM_IGNORE_HIDES_ROLLOUT = Rule(
    id="HW322",
    slug="system-ignore-hides-rollout",
    severity=Severity.WARNING,
    title="A system-wide ignore rule hides a workload's image, a Rollout's strategy or a metric",
    rationale="A system-wide rule in argocd-cm applies to every Application. Ignoring a "
    "workload's image (or its pod template), a Rollout's strategy or an analysis template's "
    "metrics hides a release in Git: the app reads Synced, automated sync never applies it, "
    "and a hand edit is never reported. Headway applies the rule as Argo CD does, so it is "
    "flagged before it ships.",
    hint="Narrow the rule to the fields a controller owns (`/spec/replicas`, an injected "
    "annotation), or move it to the one Application that needs it.",
)
_BROAD = {"", "/", "/spec", "/metadata", "/data", "/status"}
_IMMUTABLE = {
    "PersistentVolumeClaim": ("/spec/volumeName", "/spec/storageClassName", "/spec/volumeMode"),
    "Service": ("/spec/clusterIP", "/spec/clusterIPs"),
    "Job": ("/spec/selector", "/spec/template"),
    "StatefulSet": ("/spec/selector", "/spec/volumeClaimTemplates", "/spec/serviceName"),
    "Deployment": ("/spec/selector",),
}
_KNOWN_GROUPS = {
    "Deployment": "apps",
    "StatefulSet": "apps",
    "DaemonSet": "apps",
    "ReplicaSet": "apps",
    "Job": "batch",
    "CronJob": "batch",
    "HorizontalPodAutoscaler": "autoscaling",
    "Ingress": "networking.k8s.io",
    "Rollout": "argoproj.io",
    "VirtualService": "networking.istio.io",
    "HTTPRoute": "gateway.networking.k8s.io",
}


def _paths(entry: dict[str, Any]) -> list[str]:
    raw = [*as_list(entry.get("jsonPointers")), *as_list(entry.get("jqPathExpressions"))]
    return [p for p in map(normalize_pointer, map(str, raw)) if p is not None]


def covers(entry: dict[str, Any], pointer: str) -> bool:
    """Whether the entry ignores `pointer` (or a parent of it), or all controller writes."""
    if as_list(entry.get("managedFieldsManagers")):
        return True
    target = normalize_pointer(pointer) or pointer
    return any(target == p or target.startswith(p.rstrip("/") + "/") for p in _paths(entry))


def _entries(app: Document) -> Iterator[tuple[int, dict[str, Any]]]:
    spec = as_dict(as_dict(app.obj).get("spec"))
    for index, entry in enumerate(as_list(spec.get("ignoreDifferences"))):
        yield index, as_dict(entry)


def _matches(entry: dict[str, Any], doc: Document) -> bool:
    if str(entry.get("kind", "")) not in ("", "*", doc.kind):
        return False
    if str(entry.get("group", "")) not in ("*", group_of(as_dict(doc.obj).get("apiVersion"))):
        return False
    if entry.get("name") and str(entry["name"]) != name_of(doc.obj):
        return False
    wanted_ns = str(entry.get("namespace") or "")
    return not wanted_ns or wanted_ns == namespace_of(doc.obj) or not namespace_of(doc.obj)


def check_ignore_entries(ctx: CheckContext) -> Iterable[Finding]:
    for unit, app in ctx.application_documents():
        for index, entry in _entries(app):
            path = ("spec", "ignoreDifferences", index)
            if not any(_matches(entry, d) for d in unit.objects) and unit.objects:
                message = _nothing_matched(app, entry, unit)
                yield finding_at(
                    IGNORE_MATCHES_NOTHING, app, path=path, message=message, app=unit.name
                )
            broad = [p for p in _paths(entry) if p in _BROAD]
            if broad:
                yield finding_at(
                    IGNORE_TOO_BROAD,
                    app,
                    path=path,
                    message=f"ignoreDifferences entry {index} of Application/{app.name} ignores "
                    f"{broad[0]} of {entry.get('kind', 'every kind')}: any drift or bad edit "
                    "under it is invisible and never corrected",
                    app=unit.name,
                )


def _nothing_matched(app: Document, entry: dict[str, Any], unit: AppUnit) -> str:
    kind = str(entry.get("kind", ""))
    base = (
        f"ignoreDifferences entry for {kind or 'any kind'}"
        f"{' ' + str(entry['name']) if entry.get('name') else ''} matches nothing "
        f"Application/{app.name} renders"
    )
    if "group" in entry:
        return base + ": the drift it was written for is still reported, or still fought"
    groups = {group_of(as_dict(d.obj).get("apiVersion")) for d in unit.of_kind(kind)}
    groups.discard("")
    known = sorted(groups) or ([_KNOWN_GROUPS[kind]] if kind in _KNOWN_GROUPS else [])
    if known:
        return (
            base + f": the entry has no `group`, which matches only the core API group, and "
            f"{kind} is in {known[0]!r}"
        )
    return base


def _system_covers(ctx: CheckContext, doc: Document, pointer: str) -> bool:
    """Whether a system-wide rule of the repository's argocd-cm ignores `pointer` in `doc`."""
    return any(
        s.matches(doc) and covers(s.entry, pointer) for s in argocd_cm_rules.system_entries(ctx)
    )


def check_router_weights(ctx: CheckContext) -> Iterable[Finding]:
    for unit, app in ctx.application_documents():
        entries = [e for _, e in _entries(app)]
        documents = {id(d.obj): d for d in unit.objects}
        for field in route_fields([d.obj for d in unit.objects]):
            route, pointer = documents[id(field.route)], field.pointer
            if any(_matches(e, route) and covers(e, pointer) for e in entries):
                continue
            if _system_covers(ctx, route, pointer):
                continue
            what = "the pod-template hash label" if field.hash_label else "the weights"
            yield finding_at(
                ROUTER_WEIGHTS_NOT_IGNORED,
                route,
                message=f"Rollout/{field.rollout} sets {what} of {route.kind}/"
                f"{route.name} during a canary, and Application/{app.name} has no ignore "
                f"rule for {pointer}: each sync or self-heal writes the Git "
                f"{'label' if field.hash_label else 'weights'} back and canary traffic flaps "
                "wherever Argo CD syncs this repository (Headway's own Application controller "
                "leaves the fields its Rollout controller writes alone)",
                app=unit.name,
            )


def check_hpa_replicas(ctx: CheckContext) -> Iterable[Finding]:
    for unit, app in ctx.application_documents():
        automated = as_dict(sync_policy(app).get("automated"))
        if automated.get("selfHeal") is not True:
            continue
        entries = [e for _, e in _entries(app)]
        for hpa in unit.of_kind("HorizontalPodAutoscaler"):
            target = as_dict(as_dict(as_dict(hpa.obj).get("spec")).get("scaleTargetRef"))
            rollout = unit.find("Rollout", str(target.get("name", "")))
            if target.get("kind") != "Rollout" or rollout is None:
                continue
            if "replicas" not in as_dict(as_dict(rollout.obj).get("spec")):
                continue
            if any(_matches(e, rollout) and covers(e, "/spec/replicas") for e in entries):
                continue
            if _system_covers(ctx, rollout, "/spec/replicas"):
                continue
            yield finding_at(
                HPA_REPLICAS_SELF_HEAL,
                rollout,
                path=("spec", "replicas"),
                message=f"HorizontalPodAutoscaler/{hpa.name} scales Rollout/{rollout.name}, "
                f"and Application/{app.name} self-heals with no ignore rule for /spec/replicas: "
                "every scale-up is reverted to the Git count, mid-canary included",
                app=unit.name,
            )


def _respects(app: Document) -> bool:
    options = [str(o).replace(" ", "") for o in as_list(sync_policy(app).get("syncOptions"))]
    return "RespectIgnoreDifferences=true" in options


def check_respect_ignore(ctx: CheckContext) -> Iterable[Finding]:
    for unit, app in ctx.application_documents():
        entries = list(_entries(app))
        if _respects(app) and not entries:
            yield finding_at(
                RESPECT_IGNORE_MISUSED,
                app,
                path=("spec", "syncPolicy", "syncOptions"),
                message=f"Application/{app.name} sets RespectIgnoreDifferences=true with no "
                "ignoreDifferences: it changes how every resource is applied and protects "
                "nothing",
                app=unit.name,
            )
        if not _respects(app):
            yield from _immutable_findings(app, entries, unit.name)
    yield from _generator_templates(ctx)


def _immutable_findings(
    app: Document, entries: list[tuple[int, dict[str, Any]]], unit_name: str
) -> Iterator[Finding]:
    for index, entry in entries:
        fields = _IMMUTABLE.get(str(entry.get("kind", "")), ())
        hit = next(
            (f for f in fields if any(p == f or p.startswith(f + "/") for p in _paths(entry))), None
        )
        if hit is None:
            continue
        yield finding_at(
            IMMUTABLE_IGNORE_NOT_RESPECTED,
            app,
            path=("spec", "ignoreDifferences", index),
            message=f"Application/{app.name} ignores {entry.get('kind')} {hit}, which is "
            "immutable, but without RespectIgnoreDifferences=true the ignore rule only hides "
            "the diff: every sync still patches the field back and fails",
            app=unit_name,
        )


def _generator_templates(ctx: CheckContext) -> Iterator[Finding]:
    for doc in ctx.objects_of_kind("ApplicationSet"):
        template = as_dict(as_dict(as_dict(doc.obj).get("spec")).get("template"))
        policy = as_dict(as_dict(template.get("spec")).get("syncPolicy"))
        options = [str(o).replace(" ", "") for o in as_list(policy.get("syncOptions"))]
        if "RespectIgnoreDifferences=true" in options:
            yield finding_at(
                RESPECT_IGNORE_MISUSED,
                doc,
                path=("spec", "template", "spec", "syncPolicy", "syncOptions"),
                message=f"ApplicationSet/{doc.name} sets RespectIgnoreDifferences=true for "
                "every Application it generates: apply behaviour changes fleet-wide (one team "
                "saw Rollouts stop taking new images) instead of where an ignore rule needs it",
            )


def check_system_ignores(ctx: CheckContext) -> Iterable[Finding]:
    for system in argocd_cm_rules.system_entries(ctx):
        for hidden in releases_hidden_by(system.rule):
            yield finding_at(
                SYSTEM_IGNORE_HIDES_ROLLOUT,
                system.doc,
                path=("data", system.rule.key),
                message=hidden.message,
            )
