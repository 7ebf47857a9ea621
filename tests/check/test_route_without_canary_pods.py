"""HW216 and HW218: a setMirrorRoute step at a point where a routed canary has no pods mirrors
nothing; a setHeaderRoute step there is withheld until a later step gives the canary pods."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from check.conftest import CheckDir

ROLLOUT = """\
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {{name: api}}
spec:
  replicas: 4
  selector: {{matchLabels: {{app: api}}}}
  template:
    metadata: {{labels: {{app: api}}}}
    spec: {{containers: [{{name: api, image: "api:1"}}]}}
  strategy:
    canary:
      stableService: api-stable
      canaryService: api-canary
      trafficRouting:
        managedRoutes: [{{name: shadow}}, {{name: debug}}]
        istio: {{virtualService: {{name: api, routes: [primary]}}}}
      steps:
{steps}"""
MIRROR = "      - setMirrorRoute: {name: shadow, match: [{method: {exact: POST}}]}\n"
HEADER = (
    "      - setHeaderRoute: {name: debug, match: [{headerName: x-debug, "
    "headerValue: {exact: 'on'}}]}\n"
)
ROUTE_STEPS = pytest.mark.parametrize(("route", "rule"), [(MIRROR, "HW216"), (HEADER, "HW218")])


def _found(tmp_path: Path, check_dir: CheckDir, steps: str, rule: str = "HW216") -> list[str]:
    (tmp_path / "rollout.yaml").write_text(textwrap.dedent(ROLLOUT.format(steps=steps)))
    return [f.message for f in check_dir(tmp_path) if f.rule == rule]


def test_a_mirror_at_weight_0_without_canary_scale_is_flagged(
    tmp_path: Path, check_dir: CheckDir
) -> None:
    messages = _found(tmp_path, check_dir, MIRROR + "      - pause: {}\n")
    assert messages == [
        "setMirrorRoute 'shadow' on Rollout/api runs at weight 0 with no canary pods: the "
        "copies go to a Service with no endpoint, so the canary never sees the shadow traffic"
    ]


@pytest.mark.parametrize(
    "before",
    [
        "      - setCanaryScale: {replicas: 1}\n",
        "      - setCanaryScale: {weight: 50}\n",  # Argo's istio-mirror example
        "      - setWeight: 10\n",
    ],
)
@ROUTE_STEPS
def test_a_route_step_with_canary_pods_is_quiet(
    tmp_path: Path, check_dir: CheckDir, before: str, route: str, rule: str
) -> None:
    assert _found(tmp_path, check_dir, before + route + "      - pause: {}\n", rule) == []


def test_a_header_route_at_weight_0_without_canary_scale_is_flagged(
    tmp_path: Path, check_dir: CheckDir
) -> None:
    steps = HEADER + "      - pause: {}\n      - setWeight: 20\n"
    assert _found(tmp_path, check_dir, steps, "HW218") == [
        "setHeaderRoute 'debug' on Rollout/api runs at weight 0 with no canary pods: the route "
        "is withheld until a canary pod is available, so header-matching requests stay on "
        "stable until a later step gives the canary pods"
    ]
    assert _found(tmp_path, check_dir, steps, "HW216") == []


def test_a_header_route_after_the_weight_went_back_to_0_is_flagged(
    tmp_path: Path, check_dir: CheckDir
) -> None:
    steps = "      - setWeight: 20\n      - setWeight: 0\n" + HEADER
    assert len(_found(tmp_path, check_dir, steps, "HW218")) == 1


@pytest.mark.parametrize(
    ("step", "rule"),
    [("setMirrorRoute: {name: shadow}", "HW216"), ("setHeaderRoute: {name: debug}", "HW218")],
)
def test_removing_a_route_needs_no_pods(
    tmp_path: Path, check_dir: CheckDir, step: str, rule: str
) -> None:
    steps = f"      - {step}\n      - pause: {{}}\n"
    assert _found(tmp_path, check_dir, steps, rule) == []
