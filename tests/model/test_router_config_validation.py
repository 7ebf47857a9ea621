"""The Ambassador, APISIX and App Mesh blocks of `trafficRouting` are checked field by field,
each error naming file, line and field; route steps they cannot run are refused as Argo Rollouts'
validation refuses them (`pkg/apis/rollouts/validation/validation.go`: setHeaderRoute needs
Istio, ALB, APISIX or a plugin; setMirrorRoute Istio or a plugin)."""

from __future__ import annotations

import pytest
from model_helpers import rendered

from headway.model.validate import validate_text

ROLLOUT = """\
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: web
spec:
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
  strategy:
    canary:
      stableService: web-stable
      canaryService: web-canary
      trafficRouting:
{routing}
"""
HEADER_STEP = (
    "      steps:\n        - setHeaderRoute:\n"
    "            {name: qa, match: [{headerName: x, headerValue: {exact: y}}]}"
)
MIRROR_STEP = (
    "      steps:\n        - setMirrorRoute:\n"
    "            {name: qa, match: [{method: {exact: GET}}], percentage: 10}"
)


def _errors(routing: str) -> list[str]:
    return rendered(validate_text(ROLLOUT.format(routing=routing), "r.yaml").diagnostics)


@pytest.mark.parametrize(
    ("routing", "expected"),
    [
        ("        ambassador: {mappings: [web]}", []),
        (
            "        ambassador: {mappings: []}",
            [
                "r.yaml:14: Rollout/web: spec.strategy.canary.trafficRouting.ambassador.mappings:"
                " must name at least one (with none, no traffic would move to the canary)"
            ],
        ),
        (
            "        ambassador: {}",
            [
                "r.yaml:14: Rollout/web: spec.strategy.canary.trafficRouting.ambassador.mappings:"
                " missing required field"
            ],
        ),
        ("        apisix: {route: {name: web, rules: [web, api]}}", []),
        (
            "        apisix: {}",
            [
                "r.yaml:14: Rollout/web: spec.strategy.canary.trafficRouting.apisix.route:"
                " missing required field"
            ],
        ),
        (
            "        apisix:\n          route: {rules: [web]}",
            [
                "r.yaml:15: Rollout/web: spec.strategy.canary.trafficRouting.apisix.route.name:"
                " missing required field"
            ],
        ),
        (
            "        appMesh:\n          virtualService: {name: web}\n"
            "          virtualNodeGroup:\n"
            "            canaryVirtualNodeRef: {name: web-canary}\n"
            "            stableVirtualNodeRef: {name: web-stable}",
            [],
        ),
        (
            "        appMesh:\n          virtualNodeGroup:\n"
            "            canaryVirtualNodeRef: {name: web-canary}\n"
            "            stableVirtualNodeRef: {name: web-stable}",
            [
                "r.yaml:14: Rollout/web: spec.strategy.canary.trafficRouting.appMesh"
                ".virtualService: missing required field"
            ],
        ),
        (
            "        appMesh:\n          virtualService: {name: web}\n"
            "          virtualNodeGroup:\n            canaryVirtualNodeRef: {name: web-canary}",
            [
                "r.yaml:16: Rollout/web: spec.strategy.canary.trafficRouting.appMesh"
                ".virtualNodeGroup.stableVirtualNodeRef: missing required field"
            ],
        ),
    ],
)
def test_router_blocks_name_the_field_and_line(routing: str, expected: list[str]) -> None:
    assert _errors(routing) == expected


def test_a_header_route_runs_through_apisix_but_not_ambassador() -> None:
    managed = "        managedRoutes: [{name: qa}]\n"
    assert _errors("        apisix: {route: {name: web}}\n" + managed + HEADER_STEP) == []
    assert _errors("        ambassador: {mappings: [web]}\n" + managed + HEADER_STEP) == [
        "r.yaml:17: Rollout/web: spec.strategy.canary.steps[0].setHeaderRoute: "
        "needs trafficRouting with one of: istio, alb, apisix, plugin (ambassador cannot do it)"
    ]


@pytest.mark.parametrize(
    "router", ["ambassador: {mappings: [web]}", "apisix: {route: {name: web}}"]
)
def test_a_mirror_route_is_refused_through_either(router: str) -> None:
    routing = f"        {router}\n        managedRoutes: [{{name: qa}}]\n" + MIRROR_STEP
    errors = _errors(routing)
    assert any("steps[0].setMirrorRoute: needs trafficRouting with one of" in e for e in errors), (
        errors
    )
