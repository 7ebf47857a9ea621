"""The shipped Grafana dashboard (deploy/grafana/headway.json): every PromQL expression in it
names only metrics Headway exports, and every panel's query answers with data from a real
Prometheus (Debian's package) scraping Headway's own exposition of real objects."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from prometheus_client import generate_latest
from prometheus_client.registry import CollectorRegistry

from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
from headway.controllers.app.metrics import AppMetrics, AppSample
from headway.controllers.manager import ObjectKey, ReconcileTimings
from headway.controllers.notifications.delivery import NotifyMetrics
from headway.controllers.object_metrics import METRIC_HELP
from headway.engine import Engine, EngineSettings, Loop
from headway.model.obj import Obj
from prometheus_support import StartExporter, StartPrometheus

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "deploy" / "grafana" / "headway.json"
API = "argoproj.io/v1alpha1"

_NOT_NAMES = {"and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring",
              "group_left", "group_right", "inf", "nan"}
_GROUPING = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)")
_NAME = re.compile(r"(?<![\w:.$])([a-zA-Z_:][\w:]*)\b(?!\s*\()")
_VARIABLES = {"$__rate_interval": "1m", "$project": ".*", "$namespace": ".*"}


def metric_names(promql: str) -> set[str]:
    """The metric names a PromQL expression selects: what is left once strings, label
    matchers, ranges, grouping clauses, functions, keywords and numbers are taken out."""
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', promql)
    text = re.sub(r"\{[^}]*\}|\[[^\]]*\]", " ", text)
    text = _GROUPING.sub(" ", text)
    return {n for n in _NAME.findall(text) if n.lower() not in _NOT_NAMES}


def panel_queries(dashboard: Obj) -> Iterator[tuple[str, str]]:
    """(panel title, expr) for every target of every panel, rows' nested panels included."""
    for panel in dashboard["panels"]:
        for inner in [panel, *panel.get("panels", [])]:
            for target in inner.get("targets", []):
                yield str(inner["title"]), str(target["expr"])


def variable_metrics(dashboard: Obj) -> Iterator[tuple[str, str]]:
    """(variable, metric) of each `label_values(metric, label)` query variable."""
    for variable in dashboard["templating"]["list"]:
        if variable["type"] == "query":
            found = re.fullmatch(r"label_values\((\w+),\s*\w+\)", variable["query"]["query"])
            assert found, f"variable {variable['name']}: not label_values(metric, label)"
            yield str(variable["name"]), found.group(1)


def exported_names() -> set[str]:
    """Every series name Headway's registries expose (counters under their `_total`,
    histograms as their `_bucket`, `_count` and `_sum`)."""
    registry = CollectorRegistry()
    NotifyMetrics(registry)
    AppMetrics(registry)
    ReconcileTimings(registry)
    names = set(METRIC_HELP)
    for family in registry.collect():
        suffixes = {"counter": ("_total",), "histogram": ("_bucket", "_count", "_sum")}
        names.update(family.name + s for s in suffixes.get(family.type, ("",)))
    return names


def load() -> Obj:
    loaded: Obj = json.loads(DASHBOARD.read_text())
    return loaded


def test_every_expression_names_only_metrics_headway_exports() -> None:
    dashboard, exported = load(), exported_names()
    queries = list(panel_queries(dashboard))
    assert len(queries) >= 20
    for title, expr in queries:
        names = metric_names(expr)
        assert names, f"{title}: {expr} names no metric"
        assert names <= exported, f"{title}: {sorted(names - exported)} are not exported"
    for variable, metric in variable_metrics(dashboard):
        assert metric in exported, f"variable {variable}: {metric} is not exported"


def test_the_name_check_catches_a_metric_headway_does_not_export() -> None:
    # Argo CD's Kubernetes request counter, which Headway does not emit (docs/metrics.md)
    expr = 'sum by (response_code) (rate(argocd_app_k8s_request_total{name=~"a"}[5m]))'
    assert metric_names(expr) == {"argocd_app_k8s_request_total"}
    assert "argocd_app_k8s_request_total" not in exported_names()
    assert "argocd_app_reconcile_bucket" in exported_names()
    assert metric_names('count by (phase) (rollout_info{name=~"a|b"}) or vector(0)') == {
        "rollout_info"}


def test_the_dashboard_covers_apps_rollouts_analysis_reverts_and_notifications() -> None:
    used = set().union(*(metric_names(expr) for _, expr in panel_queries(load())))
    for needed in ("argocd_app_info", "headway_app_out_of_sync_seconds", "rollout_info",
                   "headway_rollout_step_index", "analysis_run_info",
                   "headway_analysis_run_metric_value", "headway_rollout_git_revert",
                   "argocd_notifications_deliveries_total", "headway_app_sync_retries_left"):
        assert needed in used, f"no panel shows {needed}"


@pytest.fixture
def store(tmp_path: Path, clock: VirtualClock) -> Iterator[LocalCluster]:
    with LocalCluster(tmp_path / "cluster.db", clock) as cluster:
        for ns in ("argocd", "shop"):
            cluster.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
                          field_manager="test")
        yield cluster


def put(store: LocalCluster, obj: Obj, status: Obj) -> None:
    store.apply(obj, field_manager="test")
    meta = obj["metadata"]
    store.patch_status(API, obj["kind"], meta["name"], meta["namespace"], status)


def seed(store: LocalCluster) -> None:
    """An OutOfSync app, an aborted canary whose revert was refused, a run with one failed
    metric and a pending promotion: a state in which every panel has something to show."""
    put(store, {"apiVersion": API, "kind": "Application",
                "metadata": {"name": "web", "namespace": "argocd"},
                "spec": {"project": "shop", "destination": {"namespace": "shop"}}},
        {"sync": {"status": "OutOfSync"}, "health": {"status": "Healthy"},
         "operationState": {"phase": "Running",
                            "wave": {"phase": "Sync", "wave": 1, "applied": True}}})
    put(store, {"apiVersion": API, "kind": "Rollout", "metadata": {
        "name": "web", "namespace": "shop",
        "annotations": {"headway.dev/git-convergence": json.dumps({"result": "Refused"})}},
        "spec": {"replicas": 2, "strategy": {"canary": {"steps": [{"setWeight": 20}]}}}},
        {"phase": "Degraded", "abort": True, "currentStepIndex": 0})
    put(store, {"apiVersion": API, "kind": "AnalysisRun",
                "metadata": {"name": "web-1", "namespace": "shop"},
                "spec": {"metrics": [{"name": "errors", "provider": {"prometheus": {}}}]}},
        {"phase": "Failed", "metricResults": [{
            "name": "errors", "phase": "Failed", "failed": 1,
            "measurements": [{"phase": "Failed", "value": "[0.2]"}]}]})
    store.apply({"apiVersion": "headway.dev/v1alpha1", "kind": "Promotion",
                 "metadata": {"name": "web-prod-1", "namespace": "argocd"},
                 "spec": {"environment": "prod", "requestedAt": "2026-01-01T00:00:00Z"}},
                field_manager="test")


async def exposition(store: LocalCluster, clock: VirtualClock, tmp_path: Path) -> str:
    """What Headway's registries serve for the seeded objects, one app look and one
    notification delivery of each outcome."""
    async with httpx2.AsyncClient() as http:
        settings = EngineSettings(state_dir=tmp_path / "state", loops=frozenset({Loop.METRICS}))
        engine = Engine(cluster=store, clock=clock, http=http, settings=settings)
        seed(store)
        await engine.step()
        clock.advance(60)
        await engine.step()
    others = CollectorRegistry()
    AppMetrics(others).observe(AppSample(
        name="web", namespace="argocd", project="shop", sync_status="OutOfSync",
        health_status="Healthy", operation="Running", budget_exhausted=True, retries_left=0.0,
        observed_at=clock.now().timestamp()))
    notify = NotifyMetrics(others)
    for succeeded in ("true", "false"):
        notify.deliveries.labels("on-sync-failed", "t", "webhook", succeeded).inc()
    notify.given_up.labels("on-sync-failed", "webhook").inc()
    notify.pending.set(1)
    timings = ReconcileTimings(others)
    for controller in ("applications", "rollouts", "analysisruns"):
        timings.observe(controller, ObjectKey("shop", "web"), seconds=0.2, failed=True)
    return (generate_latest(engine.registry) + generate_latest(others)).decode()


async def test_every_panel_query_answers_from_a_real_prometheus_scraping_headway(
    store: LocalCluster, clock: VirtualClock, tmp_path: Path,
    prometheus: StartPrometheus, exporter: StartExporter,
) -> None:
    source = exporter(await exposition(store, clock, tmp_path))
    server = prometheus([source.address])
    await server.wait_for("rollout_info", bool)
    for title, expr in panel_queries(load()):
        # a rate needs two scrapes: polled until it has them, with the harness's deadline
        values = await server.wait_for(with_variables(expr), bool)
        assert values, title


def with_variables(expr: str) -> str:
    """The query as Grafana sends it with every variable at "All"."""
    for variable, value in _VARIABLES.items():
        expr = expr.replace(variable, value)
    return expr
