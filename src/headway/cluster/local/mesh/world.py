"""What the mesh reads from the store in one step: Services, their ready Pods, Rollout roles.

Purely computational over listed objects. A Pod is an endpoint of a Service while it is Ready
(and not being deleted) and carries every label of the Service's selector; its address is
`status.podIP` (127.0.0.1 here) and the port the runtime gave it (`headway.dev/port`); its
pod-template hash is the `rollouts-pod-template-hash` label, else `pod-template-hash`. A
DestinationRule subset of a Service narrows its endpoints to the Pods carrying its labels.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from headway.cluster.local.kubelet.network import LOOPBACK
from headway.cluster.local.mesh.plan import MeshPlanError, ServiceRef, parse_host
from headway.cluster.local.mesh.plane import PlaneEndpoint
from headway.kube.pod_facts import is_ready
from headway.model.obj import Obj

__all__ = ["MeshWorld", "pod_endpoint", "rollout_roles", "subset_labels", "workload_name"]

PORT_ANNOTATION = "headway.dev/port"
HASH_LABELS = ("rollouts-pod-template-hash", "pod-template-hash")


def _namespace(obj: Obj) -> str:
    return str(obj["metadata"].get("namespace") or "default")


def pod_endpoint(pod: Obj) -> PlaneEndpoint | None:
    """The pod as an endpoint, or None when it has no port yet."""
    meta = pod["metadata"]
    port = str((meta.get("annotations") or {}).get(PORT_ANNOTATION) or "")
    if not port.isdigit():
        return None
    labels = meta.get("labels") or {}
    pod_hash = next((str(labels[k]) for k in HASH_LABELS if labels.get(k)), "")
    host = str((pod.get("status") or {}).get("podIP") or LOOPBACK)
    return PlaneEndpoint(
        host=host,
        port=int(port),
        pod_template_hash=pod_hash,
        pod=meta["name"],
        workload=workload_name(pod, pod_hash),
        app=str(labels.get("app") or labels.get("app.kubernetes.io/name") or ""),
        version=str(labels.get("version") or labels.get("app.kubernetes.io/version") or ""),
    )


def workload_name(pod: Obj, pod_hash: str) -> str:
    """The pod's workload as Istio names it: a ReplicaSet owner's name without its
    `-<pod-template-hash>` suffix (the Deployment or Rollout), another owner's name, or the
    pod's own name."""
    meta = pod["metadata"]
    owners = [o for o in meta.get("ownerReferences") or [] if isinstance(o, dict)]
    owner = next((o for o in owners if o.get("controller")), owners[0] if owners else None)
    if owner is None:
        return str(meta["name"])
    name = str(owner.get("name") or "")
    suffix = f"-{pod_hash}"
    if owner.get("kind") == "ReplicaSet" and pod_hash and name.endswith(suffix):
        return name[: -len(suffix)]
    return name


def _virtual_service_refs(istio: Any) -> list[str]:
    if not isinstance(istio, dict):
        return []
    refs = [istio.get("virtualService"), *(istio.get("virtualServices") or [])]
    return [str(r["name"]) for r in refs if isinstance(r, dict) and r.get("name")]


def _mapping(value: Any) -> dict[str, Any]:
    """A malformed Rollout (`strategy: 5`) plays no role instead of stopping the mesh."""
    return value if isinstance(value, dict) else {}


def rollout_roles(rollouts: Iterable[Obj]) -> dict[tuple[str, str], tuple[str, str]]:
    """(namespace, VirtualService) -> (stableService, canaryService) of the Rollout naming it."""
    roles: dict[tuple[str, str], tuple[str, str]] = {}
    for rollout in rollouts:
        strategy = _mapping(_mapping(rollout.get("spec")).get("strategy"))
        canary = strategy.get("canary")
        if not isinstance(canary, dict):
            continue
        istio = _mapping(canary.get("trafficRouting")).get("istio")
        stable, canary_service = canary.get("stableService"), canary.get("canaryService")
        rule = _mapping(_mapping(istio).get("destinationRule"))
        if rule:  # subset-level: the roles are subsets of one host
            stable, canary_service = rule.get("stableSubsetName"), rule.get("canarySubsetName")
        if not isinstance(stable, str) or not isinstance(canary_service, str):
            continue
        for ref in _virtual_service_refs(istio):
            name, _, namespace = ref.partition(".")
            roles[(namespace or _namespace(rollout), name)] = (stable, canary_service)
    return roles


def subset_labels(destination_rules: Iterable[Obj]) -> dict[ServiceRef, dict[str, str]]:
    """The labels of each DestinationRule subset, keyed by its host Service and name. A rule
    whose host is not a Service of this runtime defines nothing here (the mesh cannot route
    to it anyway)."""
    found: dict[ServiceRef, dict[str, str]] = {}
    for rule in destination_rules:
        spec = _mapping(rule.get("spec"))
        try:
            host = parse_host(spec.get("host"), _namespace(rule), "spec")
        except MeshPlanError:
            continue
        for subset in spec.get("subsets") or []:
            if isinstance(subset, dict) and isinstance(subset.get("name"), str):
                labels = _mapping(subset.get("labels"))
                ref = ServiceRef(host.name, host.namespace, subset["name"])
                found[ref] = {str(k): str(v) for k, v in labels.items()}
    return found


@dataclass(frozen=True)
class MeshWorld:
    """Services and Pods by namespace, as listed at the start of one mesh step."""

    services: dict[tuple[str, str], Obj] = field(default_factory=dict)
    pods: dict[str, list[Obj]] = field(default_factory=dict)
    roles: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)
    subsets: dict[ServiceRef, dict[str, str]] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        services: list[Obj],
        pods: list[Obj],
        rollouts: list[Obj],
        destination_rules: Iterable[Obj] = (),
    ) -> MeshWorld:
        by_namespace: dict[str, list[Obj]] = {}
        for pod in pods:
            by_namespace.setdefault(_namespace(pod), []).append(pod)
        return cls(
            services={(_namespace(s), s["metadata"]["name"]): s for s in services},
            pods=by_namespace,
            roles=rollout_roles(rollouts),
            subsets=subset_labels(destination_rules),
        )

    def has_service(self, ref: ServiceRef) -> bool:
        return (ref.namespace, ref.name) in self.services

    def endpoints(self, ref: ServiceRef) -> tuple[PlaneEndpoint, ...]:
        service = self.services.get((ref.namespace, ref.name))
        if service is None:
            return ()
        selector = (service.get("spec") or {}).get("selector") or {}
        if not selector:
            return ()
        if ref.subset:  # a subset no DestinationRule defines has no endpoints (Istio: 503)
            if ref not in self.subsets:
                return ()
            selector = {**selector, **self.subsets[ref]}
        found = []
        for pod in sorted(self.pods.get(ref.namespace, []), key=lambda p: p["metadata"]["name"]):
            labels = pod["metadata"].get("labels") or {}
            if all(labels.get(k) == v for k, v in selector.items()) and is_ready(pod):
                endpoint = pod_endpoint(pod)
                if endpoint is not None:
                    found.append(endpoint)
        return tuple(found)
