"""Which objects of a Rollout HW219 asks for: those Argo Rollouts looks up before it acts,
not those it creates (an SMI TrafficSplit)."""

from __future__ import annotations

from typing import Any

import yaml

from headway.check.rollout_refs import rollout_references

SPEC = """
workloadRef: {apiVersion: apps/v1, kind: Deployment, name: web}
strategy:
  canary:
    stableService: web
    canaryService: web-canary
    pingPong: {pingService: web-ping, pongService: web-pong}
    trafficRouting:
      istio:
        virtualServices:
          - {name: web-vs.mesh, routes: [primary]}
          - {name: web-internal}
        destinationRule: {name: web-dr, canarySubsetName: canary, stableSubsetName: stable}
      nginx: {stableIngress: ignored-when-the-list-is-set, stableIngresses: [web-a, web-b]}
      alb: {ingress: web-alb}
      ambassador: {mappings: [web-mapping]}
      traefik: {weightedTraefikServiceName: web-traefik}
      smi: {trafficSplitName: web-split}
"""


def _refs(spec: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    return [(r.kind, r.name, r.namespace, r.role) for r in rollout_references(spec)]


def test_every_required_reference_and_none_the_controller_creates() -> None:
    found = _refs(yaml.safe_load(SPEC))
    named = [(kind, name, namespace) for kind, name, namespace, _ in found if name]
    assert named == [
        ("Deployment", "web", ""),
        ("Service", "web", ""),
        ("Service", "web-canary", ""),
        ("Service", "web-ping", ""),
        ("Service", "web-pong", ""),
        ("VirtualService", "web-vs", "mesh"),
        ("VirtualService", "web-internal", ""),
        ("DestinationRule", "web-dr", ""),
        ("Ingress", "web-a", ""),
        ("Ingress", "web-b", ""),
        ("Ingress", "web-alb", ""),
        ("Mapping", "web-mapping", ""),
        ("TraefikService", "web-traefik", ""),
    ]


def test_blue_green_services() -> None:
    spec = {"strategy": {"blueGreen": {"activeService": "a", "previewService": "p"}}}
    named = [(kind, name, role) for kind, name, _, role in _refs(spec) if name]
    assert named == [("Service", "a", "service"), ("Service", "p", "service")]
