"""Every class of error names file, line, Kind/name and field path; nothing crashes."""

from __future__ import annotations

from pathlib import Path

import pytest
from model_helpers import document, rendered

from headway.model.diagnostics import Severity
from headway.model.manifests import parse_manifest
from headway.model.validate import validate_text
from headway.source.manifest_files import check_paths, validate_paths

REPO = Path(__file__).resolve().parents[2]

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
{canary}
"""


def rollout_errors(canary: str) -> list[str]:
    """Errors by Argo's rules; what Headway does not run yet is tested on its own."""
    text = ROLLOUT.format(canary=canary)
    return argo_rules_only(rendered(validate_text(text, "r.yaml").diagnostics))


def argo_rules_only(lines: list[str]) -> list[str]:
    return [line for line in lines if "not supported by Headway yet" not in line]


def test_invalid_pause_duration_names_step_and_line() -> None:
    errors = rollout_errors(
        "      steps:\n        - setWeight: 5\n        - pause: {duration: 2 minutes}"
    )
    assert errors == [
        "r.yaml:13: Rollout/web: spec.strategy.canary.steps[1].pause.duration: "
        '"2 minutes" is not a duration'
    ]


@pytest.mark.parametrize(
    ("canary", "expected"),
    [
        (
            "      steps: [{setWeight: 101}]",
            "r.yaml:11: Rollout/web: spec.strategy.canary.steps[0].setWeight: "
            "101 is outside 0..100",
        ),
        (
            "      steps: [{setWeight: -1}]",
            "r.yaml:11: Rollout/web: spec.strategy.canary.steps[0].setWeight: -1 is outside 0..100",
        ),
        (
            "      steps:\n        - {}",
            "r.yaml:12: Rollout/web: spec.strategy.canary.steps[0]: a step needs one of: "
            "setWeight, pause, analysis, experiment, setCanaryScale, setHeaderRoute, "
            "setMirrorRoute, plugin",
        ),
        (
            "      steps:\n        - setWeight: 5\n          pause: {}",
            "r.yaml:13: Rollout/web: spec.strategy.canary.steps[0].pause: "
            "a step may set only one of setWeight, pause, experiment, analysis; "
            "found setWeight and pause",
        ),
        (
            "      steps: [{setWeight: ten}]",
            "r.yaml:11: Rollout/web: spec.strategy.canary.steps[0].setWeight: "
            'expected an integer, got string "ten"',
        ),
        (
            "      steps: [{setCanaryScale: {replicas: 1}}]",
            "r.yaml:11: Rollout/web: spec.strategy.canary.steps[0].setCanaryScale: "
            "needs trafficRouting",
        ),
        (
            "      stableService: a\n      canaryService: a",
            "r.yaml:12: Rollout/web: spec.strategy.canary.canaryService: "
            "stableService and canaryService must differ",
        ),
        (
            "      maxSurge: 25",
            "",  # integers are fine
        ),
        (
            '      maxSurge: "25"',
            'r.yaml:11: Rollout/web: spec.strategy.canary.maxSurge: "25" must be an integer '
            'or a percentage like "25%"',
        ),
        (
            '      maxSurge: 0\n      maxUnavailable: "0%"',
            "r.yaml:12: Rollout/web: spec.strategy.canary.maxUnavailable: maxSurge and "
            "maxUnavailable cannot both be 0",
        ),
        (
            "      antiAffinity: {}",
            "r.yaml:11: Rollout/web: spec.strategy.canary.antiAffinity: antiAffinity needs "
            "exactly one of preferred/requiredDuringSchedulingIgnoredDuringExecution",
        ),
        (
            "      scaleDownDelaySeconds: 10",
            "r.yaml:11: Rollout/web: spec.strategy.canary.scaleDownDelaySeconds: "
            "applies only with trafficRouting",
        ),
    ],
)
def test_canary_rules(canary: str, expected: str) -> None:
    assert rollout_errors(canary) == ([expected] if expected else [])


ISTIO = (
    "      stableService: s\n      canaryService: c\n"
    "      trafficRouting:\n        istio: {virtualService: {name: vs}}\n"
    "        managedRoutes: [{name: beta}]\n"
)


@pytest.mark.parametrize(
    ("canary", "expected"),
    [
        (  # the wrong rejection of issue 9.6: Argo allows these two together
            ISTIO + "      steps:\n        - setCanaryScale: {weight: 10}\n"
            "          setHeaderRoute:\n"
            "            {name: beta, match: [{headerName: x, headerValue: {exact: y}}]}",
            "",
        ),
        (
            ISTIO
            + "      steps:\n        - setWeight: 10\n          setCanaryScale: {replicas: 1}",
            "",
        ),
        (
            "      scaleDownDelaySeconds: 0",
            "r.yaml:11: Rollout/web: spec.strategy.canary.scaleDownDelaySeconds: "
            "applies only with trafficRouting",
        ),
        (
            "      steps:\n        - setHeaderRoute: {name: beta}",
            "r.yaml:12: Rollout/web: spec.strategy.canary.steps[0].setHeaderRoute: "
            "needs trafficRouting with one of: istio, alb, apisix, plugin",
        ),
        (
            ISTIO + "      scaleDownDelaySeconds: 30\n      dynamicStableScale: true",
            "r.yaml:17: Rollout/web: spec.strategy.canary.dynamicStableScale: "
            "cannot be set together with scaleDownDelaySeconds",
        ),
        (
            ISTIO.replace("managedRoutes: [{name: beta}]", "maxTrafficWeight: 1000"),
            "r.yaml:15: Rollout/web: spec.strategy.canary.trafficRouting.maxTrafficWeight: "
            "is supported only with the nginx router or a plugin",
        ),
    ],
)
def test_step_and_router_rules_match_argo_rollouts_validation(canary: str, expected: str) -> None:
    """Re-checked against argo-rollouts pkg/apis/rollouts/validation/validation.go."""
    assert rollout_errors(canary) == ([expected] if expected else [])


def test_an_analysis_step_needs_a_template() -> None:
    """Headway's own rule (Argo's validation.go does not check it): an empty gate."""
    assert rollout_errors("      steps:\n        - analysis: {templates: []}") == [
        "r.yaml:12: Rollout/web: spec.strategy.canary.steps[0].analysis.templates: "
        "an analysis needs at least one template"
    ]


def test_the_pre_1_0_analysis_template_name_is_named_with_its_current_form() -> None:
    """rollouts-demo's `examples/analysis` writes `analysis: {templateName: success-rate}`,
    which Argo Rollouts v1.0 removed: the error says so and gives the list form."""
    canary = (
        "      analysis:\n        templateName: success-rate\n"
        "      steps: [{setWeight: 20}, {pause: {}}]"
    )
    assert rollout_errors(canary) == [
        "r.yaml:12: Rollout/web: spec.strategy.canary.analysis.templateName: warning: unknown "
        "field (did you mean templates?); it is ignored",
        "r.yaml:12: Rollout/web: spec.strategy.canary.analysis.templateName: Argo Rollouts "
        "v1.0 removed this field (an analysis names its templates in a list), so the analysis "
        "would run no template: write `templates: [{templateName: success-rate}]`",
    ]


def test_weight_bound_follows_max_traffic_weight() -> None:
    canary = (
        "      stableService: s\n      canaryService: c\n"
        "      trafficRouting: {nginx: {stableIngress: i}, maxTrafficWeight: 1000}\n"
        "      steps: [{setWeight: 500}, {setWeight: 1001}]"
    )
    assert rollout_errors(canary) == [
        "r.yaml:14: Rollout/web: spec.strategy.canary.steps[1].setWeight: 1001 is outside 0..1000"
    ]


@pytest.mark.parametrize(
    ("routing", "required"),
    [
        ("{istio: {virtualService: {name: vs}}}", True),
        (
            "{istio: {destinationRule: {name: d, canarySubsetName: c, stableSubsetName: s}, "
            "virtualService: {name: vs}}}",
            False,
        ),
        ("{nginx: {stableIngress: ing}}", True),
        ("{alb: {ingress: ing, servicePort: 80}}", True),
        ("{smi: {}}", True),
        ("{traefik: {weightedTraefikServiceName: t}}", True),
        ("{plugins: {example/router: {}}}", False),
    ],
)
def test_traffic_routing_requires_services_where_argo_does(routing: str, required: bool) -> None:
    errors = rollout_errors(f"      trafficRouting: {routing}")
    expected = [
        f"r.yaml:10: Rollout/web: spec.strategy.canary.{name}: required when trafficRouting is set"
        for name in ("stableService", "canaryService")
    ]
    assert errors == (expected if required else [])


def test_missing_required_fields() -> None:
    text = """\
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata:
  namespace: shop
spec:
  metrics:
    - name: errors
      successCondition: result[0] < 1
"""
    assert rendered(validate_text(text, "t.yaml").diagnostics) == [
        "t.yaml:3: AnalysisTemplate/<unnamed>: metadata.name: missing required field",
        "t.yaml:7: AnalysisTemplate/<unnamed>: spec.metrics[0].provider: missing required field",
    ]


def test_two_providers_and_bad_enum() -> None:
    text = """\
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {name: t}
spec:
  metrics:
    - name: m
      provider:
        web: {url: "http://x", method: DELETE}
        prometheus: {query: up}
"""
    assert rendered(validate_text(text, "t.yaml").diagnostics) == [
        't.yaml:8: AnalysisTemplate/t: spec.metrics[0].provider.web.method: string "DELETE" '
        "is not one of: GET, POST, PUT",
        "t.yaml:9: AnalysisTemplate/t: spec.metrics[0].provider.prometheus: a metric may have "
        "only one provider; found web and prometheus",
    ]


def test_unknown_field_is_a_warning_with_the_nearest_name() -> None:
    view, diagnostics = parse_manifest(
        document("""
        apiVersion: argoproj.io/v1alpha1
        kind: AnalysisTemplate
        metadata: {name: t}
        spec:
          metrics:
            - name: m
              successCondtion: result[0] < 1
              provider: {prometheus: {query: up}}
        """)
    )
    assert view is not None  # warnings do not stop the view
    assert rendered(diagnostics) == [
        "m.yaml:8: AnalysisTemplate/t: spec.metrics[0].successCondtion: warning: unknown field "
        "(did you mean successCondition?); it is ignored"
    ]
    assert diagnostics[0].severity is Severity.WARNING


def test_unknown_field_without_a_near_name_has_no_hint() -> None:
    _, diagnostics = parse_manifest(
        document("""
        apiVersion: argoproj.io/v1alpha1
        kind: AppProject
        metadata: {name: p}
        spec: {zzz: 1}
        """)
    )
    assert rendered(diagnostics) == [
        "m.yaml:5: AppProject/p: spec.zzz: warning: unknown field; it is ignored"
    ]


def test_application_enum_and_duration_errors() -> None:
    text = """\
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: a}
spec:
  project: p
  source: {repoURL: "https://git.example/r.git", path: x, helm: {}, kustomize: {}}
  destination: {server: "https://s", name: in-cluster}
  syncPolicy:
    syncOptions: [Replace=maybe, "Validate"]
    retry: {backoff: {duration: 1d, factor: 0}}
"""
    assert rendered(validate_text(text, "a.yaml").diagnostics) == [
        "a.yaml:6: Application/a: spec.source.kustomize: a source may set only one of helm, "
        "kustomize",
        "a.yaml:7: Application/a: spec.destination.name: a destination may set server or name, "
        "not both",
        'a.yaml:9: Application/a: spec.syncPolicy.syncOptions[0]: Replace="maybe" must be one '
        "of: true, false",
        'a.yaml:9: Application/a: spec.syncPolicy.syncOptions[1]: "Validate" is not a sync '
        "option (expected Key=value)",
        'a.yaml:10: Application/a: spec.syncPolicy.retry.backoff.duration: "1d" is not a '
        'duration (unknown unit "d")',
        "a.yaml:10: Application/a: spec.syncPolicy.retry.backoff.factor: 0 is below the minimum 1",
    ]


def test_value_file_ref_must_name_a_source() -> None:
    text = """\
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: a}
spec:
  project: p
  destination: {name: prod}
  sources:
    - {repoURL: "https://git.example/r.git", ref: values}
    - repoURL: "https://git.example/r.git"
      path: chart
      helm:
        valueFiles:
          - $vals/prod.yaml
"""
    assert rendered(validate_text(text, "a.yaml").diagnostics) == [
        'a.yaml:13: Application/a: spec.sources[1].helm.valueFiles[0]: "$vals" is not the ref '
        "of any source (refs: values)"
    ]


def test_core_kinds_check_only_the_envelope() -> None:
    text = """\
apiVersion: v1
kind: Service
metadata:
  labels: {app: web}
spec: {whatever: [1, 2]}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: c
  annotations:
    argocd.argoproj.io/sync-wave: 1
"""
    assert rendered(validate_text(text, "c.yaml").diagnostics) == [
        "c.yaml:3: Service/<unnamed>: metadata.name: missing required field",
        'c.yaml:12: ConfigMap/c: metadata.annotations["argocd.argoproj.io/sync-wave"]: '
        "expected a string, got integer 1 (quote it)",
    ]


def test_unsupported_argo_version() -> None:
    text = "apiVersion: argoproj.io/v1beta1\nkind: Rollout\nmetadata: {name: r}\nspec: {}\n"
    assert rendered(validate_text(text, "v.yaml").diagnostics) == [
        'v.yaml:1: Rollout/r: apiVersion: "argoproj.io/v1beta1" is not served for Rollout; '
        "use argoproj.io/v1alpha1"
    ]


def test_sync_window_checks() -> None:
    text = """\
apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: {name: p}
spec:
  syncWindows:
    - {kind: block, schedule: "61 * * * *", duration: 1h, timeZone: Mars/Olympus}
"""
    assert rendered(validate_text(text, "p.yaml").diagnostics) == [
        'p.yaml:6: AppProject/p: spec.syncWindows[0].kind: string "block" is not one of: '
        "allow, deny",
        'p.yaml:6: AppProject/p: spec.syncWindows[0].schedule: "61 * * * *" is not a cron schedule',
        'p.yaml:6: AppProject/p: spec.syncWindows[0].timeZone: "Mars/Olympus" is not a known '
        "time zone",
        "p.yaml:6: AppProject/p: spec.syncWindows[0]: a sync window needs applications, "
        "namespaces or clusters",
    ]


def test_metric_count_rules() -> None:
    text = """\
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {name: t}
spec:
  metrics:
    - name: m
      count: 2
      failureLimit: 3
      provider: {prometheus: {query: up}}
    - name: m
      failureLimit: -1
      provider: {prometheus: {query: up}}
"""
    assert rendered(validate_text(text, "t.yaml").diagnostics) == [
        "t.yaml:6: AnalysisTemplate/t: spec.metrics[0].interval: required when count is above 1 "
        "(count is 2)",
        "t.yaml:7: AnalysisTemplate/t: spec.metrics[0].count: 2 is below failureLimit + "
        "consecutiveSuccessLimit (3)",
        't.yaml:10: AnalysisTemplate/t: spec.metrics[1].name: duplicate metric name "m"',
        "t.yaml:11: AnalysisTemplate/t: spec.metrics[1].failureLimit: -1 needs a "
        "consecutiveSuccessLimit above 0",
    ]


def test_examples_invalid_reports_each_documented_problem(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    report = check_paths(["examples/invalid"])
    lines = rendered(report.diagnostics)
    expected = [
        "examples/invalid/bad-pause-duration.yaml:18: Rollout/checkout: "
        'spec.strategy.canary.steps[1].pause.duration: "2 minutes" is not a duration',
        "examples/invalid/bad-steps.yaml:18: Rollout/payments: "
        "spec.strategy.canary.steps[0].setWeight: 150 is outside 0..100",
        "examples/invalid/syntax-error.yaml:7: YAML syntax error: did not find expected ',' or ']'",
        "examples/invalid/traffic-without-services.yaml:15: Rollout/search: "
        "spec.strategy.canary.stableService: required when trafficRouting is set",
        "examples/invalid/analysis-template.yaml:9: AnalysisTemplate/checkout-slo: "
        "spec.metrics[0].successCondtion: warning: unknown field (did you mean "
        "successCondition?); it is ignored",
        "examples/invalid/application.yaml:15: Application/checkout: "
        'spec.syncPolicy.syncOptions[0]: "ApplyOutOfSynOnly" is not a known sync option '
        "(did you mean ApplyOutOfSyncOnly?)",
    ]
    for line in expected:
        assert line in lines
    assert not report.ok
    assert (report.files, report.objects) == (7, 10)


def test_multi_file_robustness(tmp_path: Path) -> None:
    good = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok}\n"
    (tmp_path / "a-good.yaml").write_text(good)
    (tmp_path / "b-broken.yaml").write_text("kind: [\n")
    (tmp_path / "c-binary.yml").write_bytes(b"\xff\xfe\x00garbage")
    (tmp_path / "d-list.yaml").write_text("- 1\n- 2\n")
    (tmp_path / "e-empty.yaml").write_text("---\n")
    (tmp_path / "f-values.yaml").write_text("image: {tag: v1}\nreplicas: 3\n")
    (tmp_path / "g-bad.yaml").write_text(good.replace("name: ok", "name: 5"))
    (tmp_path / "notes.txt").write_text("kind: [")
    hidden = tmp_path / ".git"
    hidden.mkdir()
    (hidden / "x.yaml").write_text("kind: [")
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: c\n")
    (chart / "templates" / "d.yaml").write_text("{{ .Values.x }}: [")
    report = check_paths([tmp_path])
    by_file = {Path(d.file).name: d.message for d in report.diagnostics}
    assert set(by_file) == {"b-broken.yaml", "c-binary.yml", "d-list.yaml", "g-bad.yaml", "chart"}
    assert by_file["chart"].startswith("skipped: a Helm chart")  # said, not silently left out
    assert by_file["c-binary.yml"] == "not UTF-8 text"
    assert by_file["d-list.yaml"] == "expected a Kubernetes object (a mapping), got a list"
    assert by_file["g-bad.yaml"] == "expected a string, got integer 5 (quote it)"
    assert report.files == 7 and report.objects == 3


def test_missing_path_is_one_diagnostic(tmp_path: Path) -> None:
    diagnostics = validate_paths([tmp_path / "nope"])
    assert [d.message for d in diagnostics] == ["no such file or directory"]


def test_ignore_differences_that_select_nothing_warn() -> None:
    text = """\
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: a}
spec:
  project: p
  destination: {name: prod}
  source: {repoURL: "https://git.example/r.git", path: x}
  ignoreDifferences:
    - group: apps
      kind: Deployment
"""
    diagnostics = validate_text(text, "a.yaml").diagnostics
    assert rendered(diagnostics) == [
        "a.yaml:9: Application/a: spec.ignoreDifferences[0]: warning: ignores nothing: give one "
        "of jsonPointers, jqPathExpressions, managedFieldsManagers"
    ]
    assert diagnostics[0].severity is Severity.WARNING


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        ("{matchLabels: {app: api}}", "app=api does not select the pod template's labels"),
        (
            "{matchExpressions: [{key: app, operator: NotIn, values: [web]}]}",
            "app!=web does not select the pod template's labels",
        ),
        ("{}", "an empty selector would select every pod"),
        (
            "{matchExpressions: [{key: app, operator: Near, values: [web]}]}",
            "selector.matchExpressions[0].operator: 'Near' is not one of In, NotIn, Exists, "
            "DoesNotExist",
        ),
    ],
)
def test_rollout_selector_must_select_its_template(selector: str, message: str) -> None:
    text = ROLLOUT.format(canary="      steps: [{setWeight: 5}]").replace(
        "{matchLabels: {app: web}}", selector
    )
    assert rendered(validate_text(text, "r.yaml").diagnostics) == [
        f"r.yaml:6: Rollout/web: spec.selector: {message}"
    ]


def test_unquoted_versions_and_dates_get_a_quoting_hint() -> None:
    text = """\
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: a}
spec:
  project: p
  destination: {name: prod}
  source: {repoURL: "https://charts.example", chart: web, targetRevision: 1.10}
  info: [{name: released, value: 2024-01-02}, {name: gated, value: true}]
"""
    assert rendered(validate_text(text, "a.yaml").diagnostics) == [
        "a.yaml:7: Application/a: spec.source.targetRevision: expected a string, got number 1.1 "
        "(quote it)",
        "a.yaml:8: Application/a: spec.info[0].value: expected a string, got date 2024-01-02 "
        "(quote it)",
        "a.yaml:8: Application/a: spec.info[1].value: expected a string, got boolean true "
        "(quote it)",
    ]


def test_project_destinations_patterns_and_duplicates() -> None:
    text = """\
apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: {name: p}
spec:
  sourceRepos: ["https://git.example/a.git", "!*", "https://git.example/a.git"]
  destinations:
    - {namespace: shop, server: "*"}
    - {namespace: "!*", name: prod}
    - {namespace: shop, server: "*"}
  roles: [{name: ci}, {name: ci}]
"""
    assert rendered(validate_text(text, "p.yaml").diagnostics) == [
        'p.yaml:5: AppProject/p: spec.sourceRepos[1]: "!*" would deny every repository',
        'p.yaml:5: AppProject/p: spec.sourceRepos[2]: duplicate entry "https://git.example/a.git"',
        'p.yaml:8: AppProject/p: spec.destinations[1].namespace: "!*" would deny everything; it '
        "is not allowed",
        'p.yaml:9: AppProject/p: spec.destinations[2]: duplicate entry "*/shop"',
        'p.yaml:10: AppProject/p: spec.roles[1]: duplicate entry "ci"',
    ]


def test_project_destination_may_name_only_a_namespace() -> None:
    text = """\
apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: {name: p}
spec:
  destinations: [{namespace: shop}]
"""
    assert validate_text(text, "p.yaml").diagnostics == []


def test_workload_ref_excludes_a_template() -> None:
    text = """\
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: r}
spec:
  workloadRef: {apiVersion: apps/v1, kind: Deployment, name: web, scaleDown: progressively}
  template:
    metadata: {labels: {app: web}}
  strategy: {canary: {}}
"""
    assert argo_rules_only(rendered(validate_text(text, "r.yaml").diagnostics)) == [
        "r.yaml:6: Rollout/r: spec.template: must be empty when workloadRef is set"
    ]
    without = text.replace("  template:\n    metadata: {labels: {app: web}}\n", "")
    assert argo_rules_only(rendered(validate_text(without, "r.yaml").diagnostics)) == []


def test_kustomization_files_and_lists_are_not_name_errors() -> None:
    text = """\
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources: [rollout.yaml]
---
apiVersion: v1
kind: List
items:
  - {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}
"""
    report = validate_text(text, "kustomization.yaml")
    assert report.diagnostics == []
    assert report.objects == 1  # the List; the Kustomization is a build input


@pytest.mark.parametrize("metadata", ["5", "[a]", "{finalizers: 5}", "{labels: {app: [web]}}"])
def test_a_lists_own_metadata_is_not_read(metadata: str) -> None:
    # Before: a traceback (the List's metadata went unchecked into its view). kubectl and
    # Argo CD apply a List's items and read nothing of its own metadata; neither does Headway.
    text = f"apiVersion: v1\nkind: ConfigMapList\nitems: []\nmetadata: {metadata}\n"
    assert validate_text(text, "list.yaml").diagnostics == []
    view, _ = parse_manifest(document(text))
    assert view is not None and view.metadata.name == ""
    assert view.metadata.finalizers == () and view.metadata.labels == {}


def test_analysis_run_needs_metrics() -> None:
    text = """\
apiVersion: argoproj.io/v1alpha1
kind: AnalysisRun
metadata: {name: run}
spec:
  args: [{name: a, value: b}]
"""
    assert rendered(validate_text(text, "run.yaml").diagnostics) == [
        "run.yaml:4: AnalysisRun/run: spec.metrics: an AnalysisRun needs at least one metric"
    ]


def test_argocd_annotations_are_checked_on_every_object() -> None:
    text = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  annotations:
    argocd.argoproj.io/sync-wave: "-1a"
    argocd.argoproj.io/hook: PreSync,PostSynk
    argocd.argoproj.io/hook-delete-policy: HookSucceeded, OnSuccess
    argocd.argoproj.io/sync-options: Prune=false,SkipDryRunOnMissingResorce=true,
---
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: r
  annotations: {argocd.argoproj.io/sync-wave: one}
spec: {workloadRef: {name: web}, strategy: {canary: {}}}
"""
    assert argo_rules_only(rendered(validate_text(text, "j.yaml").diagnostics)) == [
        'j.yaml:6: Job/migrate: metadata.annotations["argocd.argoproj.io/sync-wave"]: "-1a" is '
        "not an integer; Argo CD would silently use wave 0",
        'j.yaml:7: Job/migrate: metadata.annotations["argocd.argoproj.io/hook"]: "PostSynk" is '
        "not one of: PreSync, Sync, PostSync, SyncFail, PreDelete, PostDelete, Skip",
        'j.yaml:8: Job/migrate: metadata.annotations["argocd.argoproj.io/hook-delete-policy"]: '
        '"OnSuccess" is not one of: HookSucceeded, HookFailed, BeforeHookCreation',
        'j.yaml:9: Job/migrate: metadata.annotations["argocd.argoproj.io/sync-options"]: '
        '"SkipDryRunOnMissingResorce" is not a known sync option (did you mean '
        "SkipDryRunOnMissingResource?)",
        'j.yaml:15: Rollout/r: metadata.annotations["argocd.argoproj.io/sync-wave"]: "one" is '
        "not an integer; Argo CD would silently use wave 0",
    ]


def test_valid_argocd_annotations_pass() -> None:
    text = """\
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
  annotations:
    argocd.argoproj.io/sync-wave: " -5 "
    argocd.argoproj.io/sync-options: Prune=confirm,Delete=false
    argocd.argoproj.io/hook: Skip
"""
    assert validate_text(text, "p.yaml").diagnostics == []


def test_deadline_history_and_inconclusive_rules_of_argo_rollouts() -> None:
    """Cross-field rules of Argo Rollouts' validation (with its defaults) that Headway's
    validate used to accept: the controller would refuse these specs."""
    text = """\
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: web}
spec:
  minReadySeconds: 600
  revisionHistoryLimit: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
  strategy:
    blueGreen: {activeService: web, scaleDownDelayRevisionLimit: 3}
---
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {name: t}
spec:
  metrics:
    - name: m
      count: 2
      interval: 1m
      inconclusiveLimit: 3
      provider: {web: {url: http://w}}
"""
    assert rendered(validate_text(text, "r.yaml").diagnostics) == [
        "r.yaml:4: Rollout/web: spec.progressDeadlineSeconds: must be greater than "
        "minReadySeconds (600 <= 600)",
        "r.yaml:11: Rollout/web: spec.strategy.blueGreen.scaleDownDelayRevisionLimit: 3 is "
        "above revisionHistoryLimit (2)",
        "r.yaml:19: AnalysisTemplate/t: spec.metrics[0].count: 2 is below inconclusiveLimit (3)",
    ]


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("{{.app.source}}", "found unhashable key"),  # argo-cd's Use-Cases documentation
        ("{{.name}}-app", "did not find expected key"),
        ("app-{{.name}}: x", ""),  # an error, but not a value that begins with {{
    ],
)
def test_an_unquoted_template_value_is_named_as_the_cause(value: str, problem: str) -> None:
    """A newcomer's ApplicationSet with `repoURL: {{.app.source}}`: YAML reads `{{...}}` as
    a mapping. The error says so, at the line, and only when the line starts a value so."""
    text = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {value}\n"
    [line] = rendered(validate_text(text, "t.yaml").diagnostics)
    hint = "(a value that begins with {{ is read as a YAML mapping: quote it, e.g. '{{.name}}-app')"
    assert line.startswith("t.yaml:4: YAML syntax error: ")
    assert line.endswith(f"{problem} {hint}") if problem else "{{" not in line.split(": ", 2)[2]
