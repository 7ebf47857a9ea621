"""HW306 for the APISIX and App Mesh routers: the Rollout writes backend weights into the
user's ApisixRoute and target weights into the VirtualRouter behind an App Mesh
VirtualService, so an Application that renders them needs an ignore rule for those weights
or each sync writes Git's back mid-canary."""

from __future__ import annotations

from pathlib import Path

import pytest

from check.conftest import CheckDir
from check.router_weight_cases import weight_findings

APISIX = """\
        apisix: {route: {name: web}}
---
apiVersion: apisix.apache.org/v2
kind: ApisixRoute
metadata: {name: web}
spec:
  http:
    - name: web
      backends: [{serviceName: web, servicePort: 80}, {serviceName: web-canary, servicePort: 80}]
"""
APP_MESH = """\
        appMesh:
          virtualService: {name: web}
          virtualNodeGroup:
            canaryVirtualNodeRef: {name: web-canary}
            stableVirtualNodeRef: {name: web}
---
apiVersion: appmesh.k8s.aws/v1beta2
kind: VirtualService
metadata: {name: web}
spec: {provider: {virtualRouter: {virtualRouterRef: {name: web-router}}}}
---
apiVersion: appmesh.k8s.aws/v1beta2
kind: VirtualRouter
metadata: {name: web-router}
spec:
  routes:
    - name: primary
      httpRoute:
        action:
          weightedTargets:
            - {virtualNodeRef: {name: web}, weight: 100}
            - {virtualNodeRef: {name: web-canary}, weight: 0}
"""


@pytest.mark.parametrize(
    ("routing", "kind", "ignore"),
    [
        (
            APISIX,
            "ApisixRoute/web",
            "  ignoreDifferences:\n    - group: apisix.apache.org\n      kind: ApisixRoute\n"
            "      jqPathExpressions: ['.spec.http[].backends[].weight']\n",
        ),
        (
            APP_MESH,
            "VirtualRouter/web-router",
            "  ignoreDifferences:\n    - group: appmesh.k8s.aws\n      kind: VirtualRouter\n"
            "      jsonPointers: [/spec/routes]\n",
        ),
    ],
)
def test_route_weights_the_rollout_writes_need_an_ignore_rule(
    tmp_path: Path, check_dir: CheckDir, routing: str, kind: str, ignore: str
) -> None:
    (found,) = weight_findings(tmp_path / "bare", check_dir, routing, "")
    assert f"sets the weights of {kind} during a canary" in found
    assert weight_findings(tmp_path / "ignored", check_dir, routing, ignore) == []


def _virtual_node(name: str, labels: str) -> str:
    return (
        "---\napiVersion: appmesh.k8s.aws/v1beta2\nkind: VirtualNode\n"
        f"metadata: {{name: {name}}}\nspec: {{podSelector: {{matchLabels: {labels}}}}}\n"
    )


def test_a_virtual_node_hash_written_in_git_needs_an_ignore_rule(
    tmp_path: Path, check_dir: CheckDir
) -> None:
    """Argo's App Mesh example writes a placeholder hash into each VirtualNode's selector;
    the Rollout replaces it, and a sync would put the placeholder back."""
    router_ignore = (
        "  ignoreDifferences:\n    - group: appmesh.k8s.aws\n      kind: VirtualRouter\n"
        "      jsonPointers: [/spec/routes]\n"
    )
    nodes = _virtual_node(
        "web-canary", "{app: web, rollouts-pod-template-hash: canary-tbd}"
    ) + _virtual_node("web", "{app: web}")
    found = weight_findings(tmp_path / "bare", check_dir, APP_MESH + nodes, router_ignore)
    assert found == [
        "Rollout/web sets the pod-template hash label of VirtualNode/web-canary during a canary, "
        "and Application/web has no ignore rule for "
        "/spec/podSelector/matchLabels/rollouts-pod-template-hash: each sync or self-heal "
        "writes the Git label back and canary traffic flaps wherever Argo CD syncs this "
        "repository (Headway's own Application controller leaves the fields its Rollout "
        "controller writes alone)"
    ]
    node_ignore = (
        "    - group: appmesh.k8s.aws\n      kind: VirtualNode\n"
        "      jqPathExpressions: ['.spec.podSelector.matchLabels']\n"
    )
    assert (
        weight_findings(
            tmp_path / "ignored", check_dir, APP_MESH + nodes, router_ignore + node_ignore
        )
        == []
    )
