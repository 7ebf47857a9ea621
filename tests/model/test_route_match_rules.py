"""Route step match values: exactly one of exact, prefix, regex (Argo's hasMultipleMatchValues,
plus the mirror route's header values, which Argo's validation skips)."""

from __future__ import annotations

import pytest
from test_validation_errors import ISTIO, rollout_errors

MIRROR_ISTIO = ISTIO.replace("managedRoutes: [{name: beta}]", "managedRoutes: [{name: shadow}]")


@pytest.mark.parametrize(
    ("match", "expected"),
    [
        ("{method: {exact: POST}, path: {prefix: /color}}", ""),
        (
            "{method: {exact: POST, prefix: P}}",
            "r.yaml:17: Rollout/web: spec.strategy.canary.steps[0].setMirrorRoute.match[0]."
            "method: needs exactly one of exact, prefix, regex (has exact, prefix)",
        ),
        (
            "{path: {}}",
            "r.yaml:17: Rollout/web: spec.strategy.canary.steps[0].setMirrorRoute.match[0]."
            "path: needs exactly one of exact, prefix, regex (has none)",
        ),
        (  # Argo's validation never reads mirror headers; Istio would refuse the write
            "{headers: {x-user: abc}}",
            "r.yaml:17: Rollout/web: spec.strategy.canary.steps[0].setMirrorRoute.match[0]."
            "headers.x-user: needs exactly one of exact, prefix, regex (has none)",
        ),
    ],
)
def test_mirror_match_values(match: str, expected: str) -> None:
    canary = (
        MIRROR_ISTIO + f"      steps:\n        - setMirrorRoute: {{name: shadow, match: [{match}]}}"
    )
    errors = rollout_errors(canary)
    assert errors == ([expected] if expected else [])


def test_header_route_values_need_exactly_one_kind() -> None:
    canary = (
        ISTIO + "      steps:\n        - setHeaderRoute:\n"
        "            {name: beta, match: [{headerName: x, headerValue: {exact: y, regex: z}}]}"
    )
    assert rollout_errors(canary) == [
        "r.yaml:18: Rollout/web: spec.strategy.canary.steps[0].setHeaderRoute.match[0]."
        "headerValue: needs exactly one of exact, prefix, regex (has exact, regex)"
    ]
