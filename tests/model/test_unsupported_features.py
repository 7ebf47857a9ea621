"""`headway validate` says what the runtime would refuse, from the runtime's own table."""

from __future__ import annotations

import pytest
from model_helpers import rendered

from headway.model.validate import validate_text

NOT_YET = "not supported by Headway yet"

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
{canary}
"""


def _gaps(text: str) -> list[str]:
    return [line for line in rendered(validate_text(text, "m.yaml").diagnostics) if NOT_YET in line]


@pytest.mark.parametrize(
    ("canary", "field"),
    [
        ("      trafficRouting: {plugins: {acme/x: {}}}", 'trafficRouting.plugins["acme/x"]'),
        (
            "      trafficRouting: {smi: {}, traefik: {weightedTraefikServiceName: w}}",
            "trafficRouting",
        ),
        (
            "      trafficRouting:\n"
            "        alb: {ingress: web, servicePort: 80}\n"
            "        managedRoutes: [{name: qa}]\n"
            "      steps:\n"
            "        - setHeaderRoute:\n"
            "            {name: qa, match: [{headerName: x, headerValue: {prefix: y}}]}",
            "steps[0].setHeaderRoute.match[0].headerValue",
        ),
        ("      steps:\n        - plugin: {name: acme/step}", "steps[0].plugin"),
    ],
)
def test_rollout_features_the_runtime_refuses(canary: str, field: str) -> None:
    gaps = _gaps(ROLLOUT.format(canary=canary))
    assert len(gaps) == 1
    assert f"Rollout/web: spec.strategy.canary.{field}: " in gaps[0]


@pytest.mark.parametrize(
    "routing",
    [
        "{nginx: {stableIngress: web, additionalIngressAnnotations: {canary-by-header: X}}}",
        "{alb: {ingress: web, servicePort: 80, rootService: web}}",
        "{smi: {trafficSplitName: web}}",
        "{traefik: {weightedTraefikServiceName: web}}",
        "{plugins: {argoproj-labs/gatewayAPI: {httpRoute: web}}}",
        "{istio: {virtualService: {name: web}, destinationRule: "
        "{name: web, canarySubsetName: canary, stableSubsetName: stable}}}",
    ],
)
def test_the_routers_headway_drives_say_nothing(routing: str) -> None:
    canary = f"      trafficRouting: {routing}\n      steps: [{{setWeight: 5}}]"
    assert _gaps(ROLLOUT.format(canary=canary)) == []


@pytest.mark.parametrize(
    "router",
    [
        "plugins: {argoproj-labs/gatewayAPI: {httpRoute: web}}",
        "alb: {ingress: web, servicePort: 80}",
    ],
)
def test_exact_header_routes_through_gateway_api_and_alb_say_nothing(router: str) -> None:
    canary = (
        "      trafficRouting:\n"
        f"        {router}\n"
        "        managedRoutes: [{name: qa}]\n"
        "      steps:\n"
        "        - setHeaderRoute: {name: qa, match: [{headerName: x, headerValue: {exact: y}}]}"
    )
    assert _gaps(ROLLOUT.format(canary=canary)) == []


def test_a_weighted_experiment_through_the_gateway_api_plugin_says_nothing() -> None:
    """The plugin adds the templates to the HTTPRoute (since v0.6.0), and so does Headway."""
    canary = (
        "      trafficRouting: {plugins: {argoproj-labs/gatewayAPI: {httpRoute: web}}}\n"
        "      steps:\n        - experiment: {templates: [{name: a, specRef: canary, "
        "weight: 5}]}"
    )
    assert _gaps(ROLLOUT.format(canary=canary)) == []


def test_istio_rollout_says_nothing() -> None:
    canary = (
        "      trafficRouting: {istio: {virtualService: {name: web}}}\n"
        "      steps: [{setWeight: 5}]"
    )
    assert _gaps(ROLLOUT.format(canary=canary)) == []


def test_workload_ref_kinds_and_the_experiment_kind() -> None:
    """A workloadRef to a ReplicaSet is refused; an Experiment has a controller now."""
    text = """\
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: web}
spec:
  workloadRef: {apiVersion: apps/v1, kind: ReplicaSet, name: web}
  strategy: {canary: {}}
---
apiVersion: argoproj.io/v1alpha1
kind: Experiment
metadata: {name: trial}
spec: {templates: []}
"""
    gaps = _gaps(text)
    assert len(gaps) == 1
    assert gaps[0].startswith(
        "m.yaml:5: Rollout/web: spec.workloadRef: a workloadRef to anything but an apps/v1 "
        "Deployment is not supported"
    )


TEMPLATE = """\
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {{name: errors}}
spec:
  metrics:
    - name: error-rate
      successCondition: result[0] < 0.01
      provider:
        {provider}
"""


@pytest.mark.parametrize(
    "provider",
    [
        "datadog: {query: 'avg:errors{*}'}",
        "newRelic: {query: SELECT 1}",
        "cloudWatch: {metricDataQueries: [{id: q}]}",
        "wavefront: {query: ts(errors)}",
        "kayenta: {address: http://k, application: a, canaryConfigName: c, threshold: "
        "{pass: 90, marginal: 75}, scopes: []}",
        "graphite: {query: errors}",
        "influxdb: {query: errors}",
        "skywalking: {query: errors}",
    ],
)
def test_metric_providers_the_runtime_refuses(provider: str) -> None:
    gaps = _gaps(TEMPLATE.format(provider=provider))
    kind = provider.partition(":")[0]
    assert len(gaps) == 1
    assert f"spec.metrics[0].provider.{kind}: this metric provider is {NOT_YET}" in gaps[0]


@pytest.mark.parametrize("auth", ["sigv4", "oauth2"])
def test_prometheus_authentication_the_runtime_refuses(auth: str) -> None:
    block = {"sigv4": "{region: eu-west-1}", "oauth2": "{tokenUrl: http://t}"}[auth]
    provider = f"prometheus: {{address: http://p, query: up, authentication: {{{auth}: {block}}}}}"
    gaps = _gaps(TEMPLATE.format(provider=provider))
    assert len(gaps) == 1
    assert f"provider.prometheus.authentication.{auth}: {NOT_YET}" in gaps[0]


def test_skipping_tls_verification_is_refused_as_the_runtime_does() -> None:
    gaps = _gaps(TEMPLATE.format(provider="web: {url: https://w, insecure: true}"))
    assert len(gaps) == 1
    assert f"provider.web.insecure: skipping TLS verification is {NOT_YET}" in gaps[0]


def test_supported_providers_say_nothing() -> None:
    for provider in (
        "prometheus: {address: http://p, query: up, authentication: {basicAuth: {username: u}}}",
        "web: {url: http://w}",
        "plugin: {headway.dev/traffic: {service: web}}",
    ):
        assert _gaps(TEMPLATE.format(provider=provider)) == [], provider


def test_a_plugin_source_is_no_gap() -> None:
    """Config management plugins run (docs/sources.md); whether the named one exists is
    known only where the plugins are (`--plugins-dir`)."""
    text = """\
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: shop, namespace: argocd}
spec:
  project: default
  source:
    repoURL: https://example.com/repo.git
    path: shop
    plugin: {name: envsubst}
  destination: {server: https://kubernetes.default.svc, namespace: shop}
"""
    assert _gaps(text) == []
