"""HW306 for the Traefik and ALB routers: the Rollout writes the weights of the weighted
TraefikService it names, and the forward action annotation of each Ingress it names, so an
Application that renders them with Git's values needs an ignore rule for those fields or each
sync writes Git's back mid-canary. An Ingress without the action annotation in Git is left
alone by a sync (the Rollout's annotation is not in what Argo CD applies), so it is not
reported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from check.conftest import CheckDir
from check.router_weight_cases import weight_findings

TRAEFIK = """\
        traefik: {weightedTraefikServiceName: web-weighted}
---
apiVersion: traefik.io/v1alpha1
kind: TraefikService
metadata: {name: web-weighted}
spec:
  weighted:
    services:
      - {name: web, port: 80, weight: 100}
      - {name: web-canary, port: 80, weight: 0}
"""
ALB_ACTION = (
    '{"Type":"forward","ForwardConfig":{"TargetGroups":[{"ServiceName":"web",'
    '"ServicePort":"80","Weight":100}]}}'
)
ALB = f"""\
        alb: {{ingress: web, servicePort: 80}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  annotations:
    alb.ingress.kubernetes.io/actions.web: '{ALB_ACTION}'
spec:
  rules:
    - http:
        paths:
          - path: /
            pathType: Prefix
            backend: {{service: {{name: web, port: {{name: use-annotation}}}}}}
"""


@pytest.mark.parametrize(
    ("routing", "kind", "pointer", "ignore"),
    [
        (
            TRAEFIK,
            "TraefikService/web-weighted",
            "/spec/weighted/services/weight",
            "  ignoreDifferences:\n    - group: traefik.io\n      kind: TraefikService\n"
            "      jqPathExpressions: ['.spec.weighted.services[].weight']\n",
        ),
        (
            ALB,
            "Ingress/web",
            "/metadata/annotations/alb.ingress.kubernetes.io~1actions.web",
            "  ignoreDifferences:\n    - group: networking.k8s.io\n      kind: Ingress\n"
            "      jsonPointers: [/metadata/annotations/alb.ingress.kubernetes.io~1actions.web]\n",
        ),
    ],
)
def test_weights_the_rollout_writes_need_an_ignore_rule(
    tmp_path: Path, check_dir: CheckDir, routing: str, kind: str, pointer: str, ignore: str
) -> None:
    (found,) = weight_findings(tmp_path / "bare", check_dir, routing, "")
    assert f"sets the weights of {kind} during a canary" in found
    assert f"no ignore rule for {pointer}:" in found
    assert weight_findings(tmp_path / "ignored", check_dir, routing, ignore) == []


def test_the_alb_action_of_the_root_service_under_its_prefix_is_the_one_looked_for(
    tmp_path: Path, check_dir: CheckDir
) -> None:
    routing = ALB.replace(
        "alb: {ingress: web, servicePort: 80}",
        "alb: {ingresses: [web], servicePort: 80, rootService: web-root, "
        "annotationPrefix: custom.example.com}",
    ).replace("alb.ingress.kubernetes.io/actions.web:", "custom.example.com/actions.web-root:")
    (found,) = weight_findings(tmp_path / "root", check_dir, routing, "")
    assert "no ignore rule for /metadata/annotations/custom.example.com~1actions.web-root:" in found


def test_an_ingress_without_the_action_annotation_in_git_is_not_reported(
    tmp_path: Path, check_dir: CheckDir
) -> None:
    routing = ALB.replace(f"    alb.ingress.kubernetes.io/actions.web: '{ALB_ACTION}'\n", "")
    routing = routing.replace("  annotations:\n", "")
    assert weight_findings(tmp_path / "bare", check_dir, routing, "") == []


@pytest.mark.parametrize(
    ("path", "covers"),
    [
        ('.metadata.annotations."alb.ingress.kubernetes.io/actions.web"', True),
        ('.metadata.annotations["alb.ingress.kubernetes.io/actions.web"]', True),
        ('.metadata.annotations.["alb.ingress.kubernetes.io/actions.web"]', True),
        # jq has no single-quoted strings: Argo CD cannot compile this, so it ignores nothing
        (".metadata.annotations.'alb.ingress.kubernetes.io/actions.web'", False),
        # another annotation of the same Ingress does not cover the action
        ('.metadata.annotations."alb.ingress.kubernetes.io/actions.other"', False),
    ],
)
def test_the_alb_action_ignored_by_a_jq_path_in_each_spelling(
    tmp_path: Path, check_dir: CheckDir, path: str, covers: bool
) -> None:
    """A jq key holding dots and slashes is quoted (`."k"`, `["k"]`, `.["k"]`); before, only
    the bracket form read as covering, and only because brackets were dropped whole."""
    ignore = (
        "  ignoreDifferences:\n    - group: networking.k8s.io\n      kind: Ingress\n"
        f"      jqPathExpressions: [{json.dumps(path)}]\n"
    )
    found = weight_findings(tmp_path, check_dir, ALB, ignore)
    assert len(found) == (0 if covers else 1), found
