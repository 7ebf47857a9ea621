"""Which objects of a Rollout HW219 asks for: those Argo Rollouts looks up before it acts,
not those it creates (an SMI TrafficSplit)."""

from __future__ import annotations

from typing import Any

import yaml

from headway.check.context import AppUnit, CheckContext
from headway.check.registry import run_checks
from headway.check.rollout_refs import rollout_references
from headway.model.yamlload import load_documents

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


ROLLOUT = """
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: demo}
spec:
  strategy:
    canary:
      trafficRouting:
        nginx: {stableIngress: demo-stable}
"""

INGRESS = """
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: demo-stable}
"""

APPLICATION = """
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: canary, namespace: argocd}
"""


def _hw219_messages(rollout_unit_has_app: bool) -> list[str]:
    rollout = load_documents(ROLLOUT, "base/rollout.yaml").documents[0]
    ingress = load_documents(INGRESS, "overlays/ingress.yaml").documents[0]
    app = load_documents(APPLICATION, "apps/canary.yaml").documents[0]
    other = load_documents(APPLICATION.replace("canary", "web"), "apps/web.yaml").documents[0]
    rollout_unit = (
        AppUnit("web", other, (rollout,)) if rollout_unit_has_app else AppUnit("", None, (rollout,))
    )
    context = CheckContext(units=(AppUnit("canary", app, (ingress,)), rollout_unit))
    return [f.message for f in run_checks(context) if f.rule == "HW219"]


def test_reference_rendered_by_another_application_reads_as_a_sentence() -> None:
    """christianh814/gitops-examples@54ec4b1 argo-rollouts/canary: the Rollout of a Kustomize
    base read as a plain manifest names an Ingress only its overlay's Application renders.
    Before, the message said "which no Application does not render but canary does"."""
    (plain,) = _hw219_messages(rollout_unit_has_app=False)
    assert "no Application does not render" not in plain
    assert "Ingress/demo-stable" in plain
    assert "no Application renders beside it (the Rollout is a plain manifest)" in plain
    assert "Application canary renders it" in plain
    (owned,) = _hw219_messages(rollout_unit_has_app=True)
    assert "which Application web does not render; Application canary renders it" in owned
