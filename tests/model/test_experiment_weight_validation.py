"""An experiment template's `weight` is accepted only where a router really splits traffic to
it: Argo's rules (a router is needed; istio, smi, alb or a plugin), plus Headway's (the weights
must leave the stable a share)."""

from __future__ import annotations

from model_helpers import rendered

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
{routing}
      steps:
        - setWeight: {canary}
        - experiment:
            templates:
              - {{name: baseline, specRef: stable, weight: {weight}}}
              - {{name: canary, specRef: canary, weight: {weight}, service: {{name: exp-canary}}}}
"""

WHERE = "spec.strategy.canary.steps[1].experiment.templates"


def _errors(routing: str, *, canary: int = 20, weight: int = 10) -> list[str]:
    text = ROLLOUT.format(routing=routing, canary=canary, weight=weight)
    return rendered(d for d in validate_text(text, "rollout.yaml").diagnostics
                    if d.severity == "error")


def test_routers_that_split_to_templates_accept_the_weights() -> None:
    for routing in (
        "      trafficRouting: {istio: {virtualService: {name: web}}}",
        "      trafficRouting: {smi: {}}",
        "      trafficRouting: {alb: {ingress: web, servicePort: 80}}",
        "      trafficRouting: {istio: {virtualService: {name: web}, destinationRule: "
        "{name: web, canarySubsetName: canary, stableSubsetName: stable}}}",
    ):
        assert _errors(routing) == [], routing


def test_a_weight_without_a_router_is_refused_at_its_line() -> None:
    errors = _errors("")
    assert len(errors) == 2
    assert errors[0].startswith("rollout.yaml:17:")
    assert f"{WHERE}[0].weight: cannot be set unless trafficRouting is enabled" in errors[0]


def test_routers_argo_refuses_are_named() -> None:
    for router, routing in (
        ("nginx", "      trafficRouting: {nginx: {stableIngress: web}}"),
        ("traefik", "      trafficRouting: {traefik: {weightedTraefikServiceName: web}}"),
    ):
        errors = _errors(routing)
        assert len(errors) == 2, errors
        assert f"{WHERE}[1].weight: is only available with trafficRouting through istio, smi, " \
            f"alb or a plugin, not {router}" in errors[1]
        assert errors[1].startswith("rollout.yaml:18:")


def test_the_gateway_api_plugin_accepts_the_weights() -> None:
    """The plugin adds the templates' Services to the HTTPRoute with their weights (since
    v0.6.0; `pkg/plugin/experiment.go`), so the weight is honoured, not refused."""
    plugin = "{plugins: {argoproj-labs/gatewayAPI: {httpRoute: web}}}"
    assert _errors(f"      trafficRouting: {plugin}") == []


def test_weights_that_leave_the_stable_nothing_are_refused() -> None:
    routing = "      trafficRouting: {smi: {}}"
    assert _errors(routing, canary=80, weight=10) == []  # 80 + 10 + 10 = 100: stable 0
    [error] = _errors(routing, canary=81, weight=10)
    assert f"{WHERE}: the templates' weights (20) and the canary's (81) add up to more " \
        "than 100" in error


def test_a_service_without_weight_is_accepted_on_any_router() -> None:
    text = ROLLOUT.format(
        routing="      trafficRouting: {nginx: {stableIngress: web}}", canary=20, weight=10
    ).replace(", weight: 10", "")
    assert [d for d in validate_text(text, "r.yaml").diagnostics if d.severity == "error"] == []
