"""HW216: a setMirrorRoute step at a point where a routed canary has no pods mirrors nothing."""

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
        managedRoutes: [{{name: shadow}}]
        istio: {{virtualService: {{name: api, routes: [primary]}}}}
      steps:
{steps}"""
MIRROR = "      - setMirrorRoute: {name: shadow, match: [{method: {exact: POST}}]}\n"


def _found(tmp_path: Path, check_dir: CheckDir, steps: str) -> list[str]:
    (tmp_path / "rollout.yaml").write_text(textwrap.dedent(ROLLOUT.format(steps=steps)))
    return [f.message for f in check_dir(tmp_path) if f.rule == "HW216"]


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
def test_a_mirror_with_canary_pods_is_quiet(
    tmp_path: Path, check_dir: CheckDir, before: str
) -> None:
    assert _found(tmp_path, check_dir, before + MIRROR + "      - pause: {}\n") == []


def test_removing_a_mirror_needs_no_pods(tmp_path: Path, check_dir: CheckDir) -> None:
    steps = "      - setMirrorRoute: {name: shadow}\n      - pause: {}\n"
    assert _found(tmp_path, check_dir, steps) == []
