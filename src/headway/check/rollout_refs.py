"""The objects a Rollout names and Argo Rollouts requires to exist, and the rule that finds
the ones the Rollout's Application does not render.

Argo Rollouts looks each of these up before it acts: a Service, Ingress, VirtualService or
workload that is not there leaves the Rollout Degraded with InvalidSpec (or, for an Istio
DestinationRule or a TraefikService, failing every reconcile), so the release never starts.
Objects the controller creates itself (an SMI `trafficSplitName`, the ReplicaSets) are not
references. `rollout_references` is also what HW101 reads a Rollout's targets from.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from headway.check.context import AppUnit, CheckContext
from headway.check.findings import Finding, Rule, Severity, finding_at
from headway.check.manifest import as_dict, as_list, namespace_of
from headway.model.yamlload import Document

__all__ = [
    "MISSING_ROLLOUT_REFERENCE",
    "RolloutRef",
    "check_rollout_references",
    "rollout_references",
]

MISSING_ROLLOUT_REFERENCE = Rule(
    id="HW219",
    slug="rollout-reference-missing",
    severity=Severity.ERROR,
    title="A Rollout names a Service, route or workload its Application does not render",
    rationale="Argo Rollouts requires the Services, Ingresses, VirtualServices and workload a "
    "Rollout names to exist: a missing one leaves the Rollout Degraded (InvalidSpec), the new "
    "version is never rolled out, and the manifest synced and validated cleanly.",
    hint="Fix the name, or add the object to the Rollout's Application. An object created "
    "outside this repository on purpose: say so on the Rollout with "
    '`headway.dev/check-disable: "HW219: <who creates it>"`.',
)


@dataclass(frozen=True)
class RolloutRef:
    """One object a Rollout names: its kind and name, the namespace it is looked up in
    (empty: the Rollout's), the field naming it, and what for (`workload`, `service`,
    `route`)."""

    kind: str
    name: str
    namespace: str
    path: tuple[str | int, ...]
    role: str


_SERVICES = {
    "canary": ("stableService", "canaryService"),
    "blueGreen": ("activeService", "previewService"),
}


def rollout_references(spec: dict[str, object]) -> Iterator[RolloutRef]:
    """Every reference of a Rollout's spec that Argo Rollouts requires to exist, in order."""
    ref = as_dict(spec.get("workloadRef"))
    if ref:
        kind = str(ref.get("kind") or "Deployment")
        yield RolloutRef(kind, str(ref.get("name") or ""), "", ("spec", "workloadRef"), "workload")
    strategy = as_dict(spec.get("strategy"))
    for strategy_name, fields in _SERVICES.items():
        block = as_dict(strategy.get(strategy_name))
        for key in fields:
            where = ("spec", "strategy", strategy_name, key)
            yield RolloutRef("Service", str(block.get(key) or ""), "", where, "service")
    canary = as_dict(strategy.get("canary"))
    ping_pong = as_dict(canary.get("pingPong"))
    for key in ("pingService", "pongService"):
        path = ("spec", "strategy", "canary", "pingPong", key)
        yield RolloutRef("Service", str(ping_pong.get(key) or ""), "", path, "ping-pong")
    yield from _route_references(as_dict(canary.get("trafficRouting")))


_ROUTING = ("spec", "strategy", "canary", "trafficRouting")


def _route_references(routing: dict[str, object]) -> Iterator[RolloutRef]:
    yield from _istio_references(as_dict(routing.get("istio")))
    ingresses = (("nginx", "stableIngress", "stableIngresses"), ("alb", "ingress", "ingresses"))
    for router, one, many in ingresses:
        block = as_dict(routing.get(router))
        for path, ingress in _one_or_many(block, one, many, (router,)):
            yield RolloutRef("Ingress", str(ingress or ""), "", path, "route")
    for index, mapping in enumerate(as_list(as_dict(routing.get("ambassador")).get("mappings"))):
        path = (*_ROUTING, "ambassador", "mappings", index)
        yield RolloutRef("Mapping", str(mapping or ""), "", path, "route")
    traefik = str(as_dict(routing.get("traefik")).get("weightedTraefikServiceName") or "")
    if traefik:
        path = (*_ROUTING, "traefik", "weightedTraefikServiceName")
        yield RolloutRef("TraefikService", traefik, "", path, "route")


def _istio_references(istio: dict[str, object]) -> Iterator[RolloutRef]:
    """VirtualServices by `name` or `name.namespace` (as Argo Rollouts splits it), and the
    DestinationRule of subset-level splitting."""
    for path, service in _one_or_many(istio, "virtualService", "virtualServices", ("istio",)):
        name, _, namespace = str(as_dict(service).get("name") or "").partition(".")
        yield RolloutRef("VirtualService", name, namespace, (*path, "name"), "route")
    rule = as_dict(istio.get("destinationRule"))
    if rule:
        path = (*_ROUTING, "istio", "destinationRule", "name")
        yield RolloutRef("DestinationRule", str(rule.get("name") or ""), "", path, "route")


def _one_or_many(
    block: dict[str, object], one: str, many: str, where: tuple[str, ...]
) -> Iterator[tuple[tuple[str | int, ...], object]]:
    """The list `many` when set (Argo Rollouts then ignores `one`), else `one`."""
    items = as_list(block.get(many))
    if items:
        for index, item in enumerate(items):
            yield (*_ROUTING, *where, many, index), item
    elif block.get(one):
        yield (*_ROUTING, *where, one), block.get(one)


def check_rollout_references(ctx: CheckContext) -> Iterable[Finding]:
    for unit, rollout in ctx.units_of_kind("Rollout"):
        spec = as_dict(as_dict(rollout.obj).get("spec"))
        for ref in rollout_references(spec):
            if not ref.name or _rendered(unit, rollout, ref):
                continue
            yield _finding(ctx, unit, rollout, ref)


def _rendered(unit: AppUnit, rollout: Document, ref: RolloutRef) -> bool:
    return unit.find(ref.kind, ref.name, ref.namespace or namespace_of(rollout.obj)) is not None


def _finding(ctx: CheckContext, unit: AppUnit, rollout: Document, ref: RolloutRef) -> Finding:
    field = ".".join(map(str, ref.path))
    named = f"{ref.kind}/{ref.name}"
    owners = sorted(
        {
            other.name
            for other, _ in ctx.units_of_kind(ref.kind)
            if other is not unit and _rendered(other, rollout, ref)
        }
    )
    if owners:
        holder = (
            f"Application {unit.name} does not render"
            if unit.application is not None
            else "no Application renders beside it (the Rollout is a plain manifest)"
        )
        renderers = "Application " if len(owners) == 1 else "Applications "
        message = (
            f"Rollout/{rollout.name} names {named} ({field}), which {holder}; "
            f"{renderers}{', '.join(owners)} renders it: the Rollout is InvalidSpec whenever "
            "that object is not there (this app synced first, the other app deleted or renamed)"
        )
        return finding_at(
            MISSING_ROLLOUT_REFERENCE,
            rollout,
            path=ref.path,
            message=message,
            app=unit.name,
            severity=Severity.WARNING,
        )
    message = (
        f"Rollout/{rollout.name} names {named} ({field}), which no object of this repository "
        f"defines: Argo Rollouts will leave the Rollout Degraded (InvalidSpec) and roll "
        "nothing out"
    )
    return finding_at(
        MISSING_ROLLOUT_REFERENCE, rollout, path=ref.path, message=message, app=unit.name
    )
