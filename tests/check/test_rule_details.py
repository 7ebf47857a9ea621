"""Details of single rules: the numbers in messages, thresholds, and helpers."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from check.conftest import FIXTURES, CheckDir
from headway.check.jq_path import normalize_pointer
from headway.check.manifest import normalize_repo_url

APP = """\
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: {name}
  namespace: argocd
  finalizers: [resources-finalizer.argocd.argoproj.io]
spec:
  project: workloads
  source: {{repoURL: "https://github.com/example/fixtures.git", targetRevision: HEAD, path: {path}}}
  destination: {{name: {cluster}, namespace: {name}}}
"""


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text))
    return root


def _rollout(replicas: int, weight: int, extra: str = "") -> str:
    return f"""\
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {{name: api}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: api}}}}
  template:
    metadata: {{labels: {{app: api}}}}
    spec: {{containers: [{{name: api, image: "api:1"}}]}}
  strategy:
    canary:
{extra}      steps: [{{setWeight: {weight}}}, {{pause: {{duration: 10m}}}}]
"""


@pytest.mark.parametrize(
    ("replicas", "weight", "real"),
    [(3, 10, "25%"), (10, 5, "9%"), (2, 10, "33%")],
)
def test_replica_weight_names_the_real_percentage(
    tmp_path: Path, check_dir: CheckDir, replicas: int, weight: int, real: str
) -> None:
    _write(tmp_path, {"rollout.yaml": _rollout(replicas, weight)})
    found = [f for f in check_dir(tmp_path) if f.rule == "HW208"]
    assert len(found) == 1
    assert f"really takes {real} of traffic, not {weight}%" in found[0].message


@pytest.mark.parametrize(("replicas", "weight"), [(10, 25), (4, 50), (20, 5)])
def test_replica_weight_close_enough_is_quiet(
    tmp_path: Path, check_dir: CheckDir, replicas: int, weight: int
) -> None:
    _write(tmp_path, {"rollout.yaml": _rollout(replicas, weight)})
    assert [f for f in check_dir(tmp_path) if f.rule == "HW208"] == []


def test_traffic_router_makes_any_weight_exact(tmp_path: Path, check_dir: CheckDir) -> None:
    router = "      trafficRouting: {nginx: {stableIngress: api}}\n"
    _write(tmp_path, {"rollout.yaml": _rollout(3, 10, router)})
    assert [f for f in check_dir(tmp_path) if f.rule == "HW208"] == []


TEMPLATE = """\
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {{name: slo}}
spec:
  metrics:
    - name: errors
      interval: {interval}
{count}      failureLimit: {limit}
      successCondition: len(result) > 0 && result[0] < 0.01
      provider:
        prometheus:
          query: sum(rate(errors{{rollouts_pod_template_hash="x"}}[{window}]))
"""


def _analysis_repo(root: Path, *, interval: str, window: str, limit: int, count: str) -> Path:
    background = "      analysis: {templates: [{templateName: slo}]}\n"
    return _write(
        root,
        {
            "rollout.yaml": _rollout(4, 25, background),
            "analysis.yaml": TEMPLATE.format(
                interval=interval, window=window, limit=limit, count=count
            ),
        },
    )


def test_long_window_is_info(tmp_path: Path, check_dir: CheckDir) -> None:
    _analysis_repo(tmp_path, interval="30s", window="10m", limit=1, count="      count: 5\n")
    found = [f for f in check_dir(tmp_path) if f.rule == "HW206"]
    assert [str(f.severity) for f in found] == ["info"]


def test_window_a_few_intervals_long_is_fine(tmp_path: Path, check_dir: CheckDir) -> None:
    _analysis_repo(tmp_path, interval="30s", window="2m", limit=1, count="      count: 5\n")
    assert [f for f in check_dir(tmp_path) if f.rule == "HW206"] == []


def test_background_analysis_that_cannot_trip_before_promotion(
    tmp_path: Path, check_dir: CheckDir
) -> None:
    # 10m of pauses at one measurement per 5m leaves room for 3; failing takes 4.
    _analysis_repo(tmp_path, interval="5m", window="5m", limit=3, count="")
    found = [f for f in check_dir(tmp_path) if f.rule == "HW207"]
    assert len(found) == 1 and "room for 3 measurement(s)" in found[0].message


def test_background_analysis_that_can_trip(tmp_path: Path, check_dir: CheckDir) -> None:
    _analysis_repo(tmp_path, interval="5m", window="5m", limit=1, count="")
    assert [f for f in check_dir(tmp_path) if f.rule == "HW207"] == []


def test_several_opt_outs_with_reasons(tmp_path: Path, check_dir: CheckDir) -> None:
    rollout = _rollout(3, 10).replace(
        "metadata: {name: api}",
        "metadata:\n  name: api\n  annotations:\n    headway.dev/check-disable: |\n"
        "      HW208: the canary is one pod by design\n"
        "      HW202: analysis runs in the E2E pipeline",
    )
    _write(tmp_path, {"rollout.yaml": rollout})
    rules = {f.rule for f in check_dir(tmp_path)}
    assert not rules & {"HW208", "HW202", "HW001"}


def test_unknown_rule_in_opt_out_is_reported(tmp_path: Path, check_dir: CheckDir) -> None:
    rollout = _rollout(3, 10).replace(
        "metadata: {name: api}",
        'metadata:\n  name: api\n  annotations:\n    headway.dev/check-disable: "HW999: typo"',
    )
    _write(tmp_path, {"rollout.yaml": rollout})
    problems = [f for f in check_dir(tmp_path) if f.rule == "HW001"]
    assert len(problems) == 1 and "HW999" in problems[0].message


def test_app_of_apps_renders_children(tmp_path: Path, check_dir: CheckDir) -> None:
    root_app = APP.format(name="root", path="apps", cluster="in-cluster")
    child = APP.format(name="web", path="web", cluster="prod")
    hpa = """\
    apiVersion: autoscaling/v2
    kind: HorizontalPodAutoscaler
    metadata: {name: web}
    spec: {scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}}
    ---
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: web
      annotations: {argocd.argoproj.io/sync-wave: "1"}
    spec: {template: {metadata: {labels: {app: web}}}}
    """
    _write(tmp_path, {"root.yaml": root_app, "apps/web.yaml": child, "web/all.yaml": hpa})
    findings = check_dir(tmp_path)
    wave = [f for f in findings if f.rule == "HW101"]
    assert [(f.app, f.resource) for f in wave] == [("web", "HorizontalPodAutoscaler/web")]


def test_kustomize_output_is_checked(tmp_path: Path, check_dir: CheckDir) -> None:
    app = APP.format(name="web", path="overlay", cluster="prod")
    kustomization = "resources: [hpa.yaml, deploy.yaml]\n"
    hpa = """\
    apiVersion: autoscaling/v2
    kind: HorizontalPodAutoscaler
    metadata: {name: web}
    spec: {scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}}
    """
    deploy = """\
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: web
      annotations: {argocd.argoproj.io/sync-wave: "1"}
    spec:
      selector: {matchLabels: {app: web}}
      template: {metadata: {labels: {app: web}}, spec: {containers: [{name: w, image: w}]}}
    """
    _write(
        tmp_path,
        {
            "apps/web.yaml": app,
            "overlay/kustomization.yaml": kustomization,
            "overlay/hpa.yaml": hpa,
            "overlay/deploy.yaml": deploy,
        },
    )
    findings = check_dir(tmp_path)
    assert [f.rule for f in findings if f.rule in ("HW101", "HW002")] == ["HW101"]


def test_helm_file_dependency_is_a_shared_library(tmp_path: Path, check_dir: CheckDir) -> None:
    chart = "apiVersion: v2\nname: {n}\nversion: 0.1.0\n"
    deps = "dependencies:\n  - {name: common, version: 0.1.0, repository: file://../common}\n"
    cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: '{{ .Chart.Name }}'}\ndata: {a: b}\n"
    files = {
        "apps/dev.yaml": APP.format(name="api-dev", path="charts/api-dev", cluster="dev"),
        "apps/prod.yaml": APP.format(name="api-prod", path="charts/api-prod", cluster="prod"),
        "charts/common/Chart.yaml": chart.format(n="common"),
        "charts/common/templates/cm.yaml": cm,
    }
    for env in ("dev", "prod"):
        files[f"charts/api-{env}/Chart.yaml"] = chart.format(n=f"api-{env}") + deps
        files[f"charts/api-{env}/templates/cm.yaml"] = cm
    _write(tmp_path, files)
    findings = check_dir(tmp_path)
    assert [f.rule for f in findings if f.rule == "HW002"] == []
    shared = [f for f in findings if f.rule == "HW317"]
    assert len(shared) == 1 and "charts/common" in shared[0].message


@pytest.mark.parametrize(
    "url",
    [
        "https://github.com/Example/Infra.git",
        "git@github.com:example/infra.git",
        "ssh://git@github.com/example/infra",
        "https://github.com/example/infra/",
    ],
)
def test_repository_urls_normalize_alike(url: str) -> None:
    assert normalize_repo_url(url) == "github.com/example/infra"


@pytest.mark.parametrize(
    ("pointer", "normalized"),
    [
        (".spec.http[].route[].weight", "/spec/http/route/weight"),
        ("/spec/http/0/route/1/weight", "/spec/http/route/weight"),
        (".spec.replicas", "/spec/replicas"),
        ('.metadata.annotations."a.io/b"', "/metadata/annotations/a.io~1b"),
        ('.metadata.annotations["a.io/b"]', "/metadata/annotations/a.io~1b"),
        ('.metadata.annotations.["a.io/b"]', "/metadata/annotations/a.io~1b"),
        ("/metadata/annotations/a.io~1b", "/metadata/annotations/a.io~1b"),
        (".metadata.annotations.'a.io/b'", None),  # not jq: no single-quoted strings
        ('.metadata.annotations . "a.io/b"', "/metadata/annotations/a.io~1b"),
        ('.spec.containers[] | select(.name == "a")', None),  # more than a path
        ('.metadata.annotations."\\(.x)"', None),  # an interpolation names no fixed key
    ],
)
def test_ignore_paths_normalize(pointer: str, normalized: str | None) -> None:
    assert normalize_pointer(pointer) == normalized


def test_source_path_leaving_the_repository_is_reported(
    tmp_path: Path, check_dir: CheckDir
) -> None:
    _write(tmp_path, {"apps/web.yaml": APP.format(name="web", path="../../etc", cluster="prod")})
    problems = [f for f in check_dir(tmp_path) if f.rule == "HW002"]
    assert len(problems) == 1 and "leaves the repository root" in problems[0].message


def test_certificate_before_its_issuer_deadlocks(tmp_path: Path, check_dir: CheckDir) -> None:
    manifests = """\
    apiVersion: cert-manager.io/v1
    kind: Certificate
    metadata:
      name: web-tls
      annotations: {argocd.argoproj.io/sync-wave: "-1"}
    spec:
      secretName: web-tls
      issuerRef: {name: letsencrypt, kind: Issuer}
    ---
    apiVersion: cert-manager.io/v1
    kind: Issuer
    metadata: {name: letsencrypt}
    spec: {acme: {server: https://acme.example/directory}}
    """
    _write(tmp_path, {"tls.yaml": manifests})
    found = [f for f in check_dir(tmp_path) if f.rule == "HW101"]
    assert [(str(f.severity), f.resource) for f in found] == [("error", "Certificate/web-tls")]
    assert "wave -1" in found[0].message and "wave 0" in found[0].message


def test_environments_on_different_branches_are_staged(tmp_path: Path, check_dir: CheckDir) -> None:
    deployment = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {a: b}\n"
    dev = APP.format(name="web-dev", path="base", cluster="dev")
    prod = APP.format(name="web-prod", path="base", cluster="prod")
    _write(tmp_path, {"apps/dev.yaml": dev, "apps/prod.yaml": prod, "base/cm.yaml": deployment})
    assert [f.rule for f in check_dir(tmp_path) if f.rule == "HW317"] == ["HW317"]
    prod_branch = prod.replace("targetRevision: HEAD", "targetRevision: release/prod")
    (tmp_path / "apps/prod.yaml").write_text(prod_branch)
    assert [f for f in check_dir(tmp_path) if f.rule == "HW317"] == []


GATEWAY_ROLLOUT = """\
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template: {metadata: {labels: {app: web}}, spec: {containers: [{name: w, image: w}]}}
  strategy:
    canary:
      canaryService: web-canary
      stableService: web
      trafficRouting:
        plugins:
          argoproj-labs/gatewayAPI: {httpRoute: web, namespace: web}
      steps: [{setWeight: 10}, {pause: {duration: 1m}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web}
spec:
  rules:
    - backendRefs: [{name: web, port: 80, weight: 100}, {name: web-canary, port: 80, weight: 0}]
"""


@pytest.mark.parametrize(
    ("ignore", "expected"),
    [
        ("", ["HW306"]),
        (
            "  ignoreDifferences:\n    - group: gateway.networking.k8s.io\n      kind: HTTPRoute\n"
            "      jqPathExpressions: ['.spec.rules[].backendRefs[].weight']\n",
            [],
        ),
    ],
)
def test_gateway_api_route_weights(
    tmp_path: Path, check_dir: CheckDir, ignore: str, expected: list[str]
) -> None:
    app = APP.format(name="web", path="web", cluster="prod") + ignore
    _write(tmp_path, {"apps/web.yaml": app, "web/all.yaml": GATEWAY_ROLLOUT})
    assert [f.rule for f in check_dir(tmp_path) if f.rule == "HW306"] == expected


def test_manual_blue_green_in_an_early_wave(tmp_path: Path, check_dir: CheckDir) -> None:
    rollout = """\
    apiVersion: argoproj.io/v1alpha1
    kind: Rollout
    metadata: {name: web}
    spec:
      strategy:
        blueGreen: {activeService: web, autoPromotionEnabled: false}
    ---
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: after
      annotations: {argocd.argoproj.io/sync-wave: "3"}
    """
    _write(tmp_path, {"all.yaml": rollout})
    found = [f for f in check_dir(tmp_path) if f.rule == "HW103"]
    assert len(found) == 1 and "autoPromotionEnabled" in found[0].message


def test_an_unset_service_field_does_not_point_at_an_unnamed_service(
    tmp_path: Path, check_dir: CheckDir
) -> None:
    unnamed = "apiVersion: v1\nkind: Service\nmetadata: {labels: {app: x}}\nspec: {ports: []}\n"
    _write(tmp_path, {"rollout.yaml": _rollout(4, 50), "svc.yaml": unnamed})
    found = [f for f in check_dir(tmp_path) if f.rule == "HW101"]
    assert found == [], [f.message for f in found]


def test_hw202_counts_only_the_steps_that_move_traffic(check_dir: CheckDir) -> None:
    """The fixture has a 4-step canary (2 setWeight steps) and a canary whose one step is an
    experiment: the message must count traffic steps and not claim an experiment shifts any."""
    found = check_dir(FIXTURES / "HW202-canary-without-analysis" / "found")
    messages = {f.message.split(" ", 1)[0]: f.message for f in found if f.rule == "HW202"}
    assert messages["Rollout/checkout"].startswith(
        "Rollout/checkout shifts traffic in 2 steps but never runs an analysis")
    assert messages["Rollout/ledger"].startswith(
        "Rollout/ledger has 1 step and none shifts traffic, but never runs an analysis")
