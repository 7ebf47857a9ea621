"""The gatewayAPI plugin's block is read field by field against the plugin's config struct
(rollouts-plugin-trafficrouter-gatewayapi `pkg/plugin/types.go` at 0.15.0, 96c63fd): what
Headway does not do is refused by name, what nobody knows is named as unknown, at its line.
The plugin itself drops unknown fields silently (`json.Unmarshal`)."""

from __future__ import annotations

from headway.model.validate import validate_text

ROLLOUT = """\
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {{name: web}}
spec:
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
  strategy:
    canary:
      stableService: web-stable
      canaryService: web-canary
      trafficRouting:
        plugins:
          argoproj-labs/gatewayAPI:
{block}
      steps:
        - setWeight: 10
"""
WHERE = 'spec.strategy.canary.trafficRouting.plugins["argoproj-labs/gatewayAPI"]'


def _errors(block: str) -> list[str]:
    text = ROLLOUT.format(block=block)
    return [str(d) for d in validate_text(text, "r.yaml").diagnostics if d.severity == "error"]


def test_the_fields_headway_reads_say_nothing() -> None:
    block = (
        "            httpRoutes: [{name: a, useHeaderRoutes: true}, {name: b}]\n"
        "            namespace: edge\n"
        "            configMap: routes\n"
        "            disableInProgressLabel: false"
    )
    assert _errors(block) == []


def test_other_route_kinds_and_selectors_are_refused_by_name() -> None:
    block = (
        "            httpRoute: web\n"
        "            grpcRoutes: [{name: g}]\n"
        "            tlsRoute: t\n"
        "            httpRouteSelector: {matchLabels: {app: web}}"
    )
    errors = _errors(block)
    assert [e.split(": ")[0] for e in errors] == ["r.yaml:16", "r.yaml:17", "r.yaml:18"]
    assert f"{WHERE}.grpcRoutes: routing through a GRPCRoute is not supported" in errors[0]
    assert f"{WHERE}.tlsRoute: routing through a TLSRoute is not supported" in errors[1]
    assert f"{WHERE}.httpRouteSelector: finding routes by label selector" in errors[2]


def test_a_custom_in_progress_label_is_refused() -> None:
    errors = _errors("            httpRoute: web\n            inProgressLabelValue: running")
    assert len(errors) == 1
    assert f"{WHERE}.inProgressLabelValue: changing the in-progress label" in errors[0]


def test_misspelt_fields_are_named_with_the_known_ones() -> None:
    block = (
        "            httpRoutes: [{name: web, useHeaderRoute: true}]\n"
        "            namspace: edge"
    )
    errors = _errors(block)
    assert len(errors) == 2
    assert errors[0].startswith(f"r.yaml:15: Rollout/web: {WHERE}.httpRoutes[0].useHeaderRoute: "
                                "unknown field")
    assert "the known ones: name, useHeaderRoutes" in errors[0]
    assert errors[1].startswith(f"r.yaml:16: Rollout/web: {WHERE}.namspace: unknown field")
    assert "namespace" in errors[1]


def test_a_header_step_with_no_route_taking_header_rules_is_refused() -> None:
    """`httpRoutes` entries take header rules only with `useHeaderRoutes: true`."""
    step = "{name: qa, match: [{headerName: x, headerValue: {exact: y}}]}"
    text = ROLLOUT.format(block="            httpRoutes: [{name: web}]").replace(
        "      steps:\n        - setWeight: 10",
        f"        managedRoutes: [{{name: qa}}]\n      steps:\n        - setHeaderRoute: {step}",
    )
    [error] = [str(d) for d in validate_text(text, "r.yaml").diagnostics
               if d.severity == "error"]
    assert "spec.strategy.canary.steps[0].setHeaderRoute: no route of the gatewayAPI plugin " \
        "takes header rules" in error
    flagged = text.replace("{name: web}", "{name: web, useHeaderRoutes: true}")
    assert [d for d in validate_text(flagged, "r.yaml").diagnostics if d.severity == "error"] \
        == []
