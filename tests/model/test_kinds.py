"""Each kind parses into its typed view with Argo's documented defaults filled in."""

from __future__ import annotations

import pytest
from model_helpers import document

from headway.model import k8s
from headway.model.analysis import AnalysisRun, AnalysisTemplate
from headway.model.application import Application
from headway.model.appproject import AppProject
from headway.model.manifests import parse_manifest
from headway.model.rollout import Rollout

# Indented to sit under `spec:` in the tests' dedented f-strings.
POD = """
          selector: {matchLabels: {app: web}}
          template:
            metadata: {labels: {app: web}}
            spec: {containers: [{name: web, image: "headway-demo/web:v1"}]}"""


def test_application_defaults() -> None:
    view, diagnostics = parse_manifest(
        document("""
        apiVersion: argoproj.io/v1alpha1
        kind: Application
        metadata: {name: web, namespace: argocd}
        spec:
          project: shop
          source: {repoURL: "https://git.example/r.git", path: apps/web}
          destination: {server: "https://kubernetes.default.svc", namespace: web}
          syncPolicy:
            automated: {}
            retry: {limit: 3}
        """)
    )
    assert diagnostics == []
    assert isinstance(view, Application)
    spec = view.spec
    assert spec.revision_history_limit == 10
    assert spec.source is not None and spec.source.revision == "HEAD"
    assert spec.effective_sources == (spec.source,)
    assert spec.sync_policy is not None and spec.sync_policy.automated is not None
    automated = spec.sync_policy.automated
    assert (automated.prune, automated.self_heal, automated.allow_empty) == (False, False, False)
    assert automated.enabled is True
    retry = spec.sync_policy.retry
    assert retry is not None and retry.limit == 3 and retry.refresh is False
    assert (retry.backoff.duration, retry.backoff.factor, retry.backoff.max_duration) == (
        5.0,
        2,
        180.0,
    )


def test_application_multi_source_helm_and_options() -> None:
    view, diagnostics = parse_manifest(
        document("""
        apiVersion: argoproj.io/v1alpha1
        kind: Application
        metadata: {name: pay}
        spec:
          project: prod
          sources:
            - {repoURL: "https://git.example/infra.git", targetRevision: main, ref: values}
            - repoURL: "https://git.example/infra.git"
              path: charts/pay
              helm:
                releaseName: pay
                valueFiles: [values.yaml, $values/envs/prod.yaml]
                valuesObject: {image: {tag: abc}}
                parameters: [{name: replicas, value: "3", forceString: true}]
          destination: {name: prod, namespace: pay}
          syncPolicy:
            syncOptions: [CreateNamespace=false, PrunePropagationPolicy=background]
            retry: {limit: -1, backoff: {duration: "30", maxDuration: 1h}}
          ignoreDifferences:
            - {kind: Deployment, jsonPointers: [/spec/replicas]}
        """)
    )
    assert diagnostics == []
    assert isinstance(view, Application)
    values, chart = view.spec.effective_sources
    assert values.ref == "values" and values.revision == "main"
    assert chart.helm is not None and chart.helm.value_files[1] == "$values/envs/prod.yaml"
    assert chart.helm.values_object == {"image": {"tag": "abc"}}
    assert chart.helm.parameters[0].force_string is True
    assert chart.helm.ignore_missing_value_files is False and chart.helm.skip_crds is False
    policy = view.spec.sync_policy
    assert policy is not None and policy.automated is None
    assert policy.options == {"CreateNamespace": "false", "PrunePropagationPolicy": "background"}
    assert policy.retry is not None and policy.retry.backoff.duration == 30.0
    assert policy.retry.backoff.max_duration == 3600.0
    ignore = view.spec.ignore_differences[0]
    assert ignore.group == "" and ignore.kind == "Deployment"  # core group, not "any"


def test_appproject_negation_whitelist_and_windows() -> None:
    view, diagnostics = parse_manifest(
        document("""
        apiVersion: argoproj.io/v1alpha1
        kind: AppProject
        metadata: {name: shop}
        spec:
          sourceRepos: ["https://git.example/*", "!https://git.example/secret.git"]
          destinations: [{server: "https://kubernetes.default.svc", namespace: shop}]
          clusterResourceWhitelist: []
          roles: [{name: ci, policies: ["p, proj:shop:ci, applications, sync, shop/*, allow"],
                   jwtTokens: [{iat: 1700000000}]}]
          syncWindows:
            - {kind: allow, schedule: "0 9 * * 1-5", duration: 8h, applications: ["*"]}
        """)
    )
    assert diagnostics == []
    assert isinstance(view, AppProject)
    spec = view.spec
    assert [(r.pattern, r.negated) for r in spec.source_repos] == [
        ("https://git.example/*", False),
        ("https://git.example/secret.git", True),
    ]
    assert spec.cluster_resource_whitelist == () and spec.cluster_resource_whitelist_set
    window = spec.sync_windows[0]
    assert (window.kind, window.duration, window.manual_sync, window.time_zone) == (
        "allow",
        28800.0,
        False,
        "UTC",
    )
    assert spec.roles[0].jwt_tokens[0].iat == 1700000000
    assert spec.signature_keys == ()


def test_appproject_without_whitelist_is_distinguishable() -> None:
    view, _ = parse_manifest(
        document("""
        apiVersion: argoproj.io/v1alpha1
        kind: AppProject
        metadata: {name: open}
        spec: {sourceRepos: ["*"]}
        """)
    )
    assert isinstance(view, AppProject)
    assert view.spec.cluster_resource_whitelist_set is False


def test_rollout_canary_defaults_and_every_step_kind() -> None:
    view, diagnostics = parse_manifest(
        document(f"""
        apiVersion: argoproj.io/v1alpha1
        kind: Rollout
        metadata: {{name: web}}
        spec:{POD}
          strategy:
            canary:
              stableService: web-stable
              canaryService: web-canary
              trafficRouting:
                istio: {{virtualService: {{name: web, routes: [primary]}}}}
                managedRoutes: [{{name: header}}, {{name: mirror}}]
              analysis:
                templates: [{{templateName: bg}}]
                startingStep: 2
              steps:
                - setWeight: 10
                - pause: {{duration: 90}}
                - pause: {{duration: "45"}}
                - pause: {{}}
                - analysis:
                    templates: [{{templateName: slo, clusterScope: true}}]
                    args: [{{name: hash, valueFrom: {{podTemplateHashValue: Latest}}}}]
                - experiment:
                    duration: 5m
                    templates: [{{name: base, specRef: stable}}]
                - setCanaryScale: {{replicas: 2}}
                - setHeaderRoute:
                    name: header
                    match: [{{headerName: X-Canary, headerValue: {{exact: "yes"}}}}]
                - setMirrorRoute: {{name: mirror, percentage: 50}}
                - plugin: {{name: example/step, config: {{a: 1}}}}
        """)
    )
    assert diagnostics == []
    assert isinstance(view, Rollout)
    spec = view.spec
    assert (spec.replicas, spec.revision_history_limit, spec.progress_deadline_seconds) == (
        1,
        10,
        600,
    )
    assert spec.paused is False and spec.min_ready_seconds == 0
    canary = spec.strategy.canary
    assert canary is not None and spec.strategy.blue_green is None
    assert (canary.max_surge, canary.max_unavailable) == ("25%", "25%")
    assert canary.abort_scale_down_delay_seconds == 30
    assert canary.dynamic_stable_scale is False
    assert [step.kind for step in canary.steps] == [
        "setWeight",
        "pause",
        "pause",
        "pause",
        "analysis",
        "experiment",
        "setCanaryScale",
        "setHeaderRoute",
        "setMirrorRoute",
        "plugin",
    ]
    durations = [step.pause.duration for step in canary.steps[1:4] if step.pause]
    assert durations == [90.0, 45.0, None]
    analysis = canary.steps[4].analysis
    assert analysis is not None and analysis.templates[0].cluster_scope is True
    value_from = analysis.args[0].value_from
    assert value_from is not None and value_from.pod_template_hash_value == "Latest"
    scale = canary.steps[6].set_canary_scale
    assert scale is not None and scale.replicas == 2 and scale.match_traffic_weight is False
    assert canary.traffic_routing is not None
    assert canary.traffic_routing.routers == ("istio",)
    assert canary.traffic_routing.managed_routes == ("header", "mirror")
    assert canary.traffic_routing.max_traffic_weight == 100
    assert canary.analysis is not None and canary.analysis.starting_step == 2


def test_rollout_blue_green_defaults() -> None:
    view, diagnostics = parse_manifest(
        document(f"""
        apiVersion: argoproj.io/v1alpha1
        kind: Rollout
        metadata: {{name: web}}
        spec:
          replicas: 3{POD}
          strategy:
            blueGreen:
              activeService: web-active
              previewService: web-preview
              prePromotionAnalysis: {{templates: [{{templateName: e2e}}]}}
        """)
    )
    assert diagnostics == []
    assert isinstance(view, Rollout)
    bg = view.spec.strategy.blue_green
    assert bg is not None
    assert bg.auto_promotion_enabled is True and bg.auto_promotion_seconds == 0
    assert bg.scale_down_delay_seconds == 30 and bg.abort_scale_down_delay_seconds == 30
    assert bg.pre_promotion_analysis is not None and bg.post_promotion_analysis is None


TEMPLATE = """
apiVersion: argoproj.io/v1alpha1
kind: {kind}
metadata: {{name: slo}}
spec:
  args: [{{name: canary-hash}}, {{name: token, valueFrom: {{secretKeyRef: {{name: s, key: k}}}}}}]
  dryRun: [{{metricName: latency}}]
  metrics:
    - name: errors
      interval: "{{{{args.interval}}}}"
      successCondition: len(result) > 0 && result[0] < 0.02
      provider:
        prometheus: {{address: "http://127.0.0.1:9090", query: up}}
    - name: smoke
      provider: {{web: {{url: "http://svc/healthz"}}}}
    - name: e2e
      provider: {{job: {{spec: {{template: {{spec: {{restartPolicy: Never}}}}}}}}}}
"""


@pytest.mark.parametrize("kind", ["AnalysisTemplate", "ClusterAnalysisTemplate"])
def test_analysis_template_defaults(kind: str) -> None:
    view, diagnostics = parse_manifest(document(TEMPLATE.format(kind=kind)))
    assert diagnostics == []
    assert isinstance(view, AnalysisTemplate) and view.kind == kind
    errors, smoke, e2e = view.spec.metrics
    assert (errors.failure_limit, errors.inconclusive_limit) == (0, 0)
    assert (errors.consecutive_error_limit, errors.consecutive_success_limit) == (4, 0)
    assert errors.interval == "{{args.interval}}"  # resolved when a run starts
    assert errors.provider.kind == "prometheus" and errors.provider.prometheus is not None
    assert errors.provider.prometheus.insecure is False
    assert smoke.provider.web is not None
    assert (smoke.provider.web.method, smoke.provider.web.timeout_seconds) == ("GET", 10)
    assert smoke.provider.web.json_path == "{$}"
    assert e2e.provider.kind == "job"
    assert view.spec.args[0].value is None
    secret = view.spec.args[1].value_from
    assert secret is not None and secret.secret_key_ref is not None
    assert secret.secret_key_ref.key == "k"
    assert view.spec.dry_run == ({"metricName": "latency"},)


def test_analysis_run_keeps_status() -> None:
    view, diagnostics = parse_manifest(
        document("""
        apiVersion: argoproj.io/v1alpha1
        kind: AnalysisRun
        metadata: {generateName: web-}
        spec:
          args: [{name: canary-hash, value: abc123}]
          metrics:
            - {name: errors, count: 3, interval: 1m, provider: {web: {url: "http://x"}}}
        status: {phase: Running}
        """)
    )
    assert diagnostics == []
    assert isinstance(view, AnalysisRun)
    assert view.name == "web-" and view.spec.terminate is False
    assert view.spec.metrics[0].count == 3 and view.status == {"phase": "Running"}


def test_generic_object_group_version_split() -> None:
    view, diagnostics = parse_manifest(
        document("""
        apiVersion: autoscaling/v2
        kind: HorizontalPodAutoscaler
        metadata:
          name: web
          namespace: shop
          labels: {app: web}
          annotations: {argocd.argoproj.io/sync-wave: "2"}
          ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: web, uid: u1}]
        spec: {anything: [goes]}
        """)
    )
    assert diagnostics == []
    assert isinstance(view, k8s.K8sObject)
    assert (view.group, view.version, view.kind, view.name) == (
        "autoscaling",
        "v2",
        "HorizontalPodAutoscaler",
        "web",
    )
    assert view.namespace == "shop" and view.metadata.labels == {"app": "web"}
    assert view.metadata.owner_references[0].kind == "Deployment"
    assert k8s.split_api_version("v1") == ("", "v1")
