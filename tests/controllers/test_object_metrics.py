"""Metrics under Argo's names, read from what `/metrics` serves for an engine's store."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx2
import pytest
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
from headway.engine import Engine, EngineSettings, Loop
from headway.kubetime import format_time
from headway.model.obj import Obj

API = "argoproj.io/v1alpha1"


@pytest.fixture
def store(tmp_path: Path, clock: VirtualClock) -> Iterator[LocalCluster]:
    with LocalCluster(tmp_path / "cluster.db", clock) as cluster:
        for ns in ("argocd", "shop"):
            cluster.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
                          field_manager="test")
        yield cluster


@pytest.fixture
async def engine(store: LocalCluster, clock: VirtualClock, tmp_path: Path
                 ) -> AsyncIterator[Engine]:
    async with httpx2.AsyncClient() as http:
        settings = EngineSettings(state_dir=tmp_path / "state", loops=frozenset({Loop.METRICS}))
        yield Engine(cluster=store, clock=clock, http=http, settings=settings)


def put(store: LocalCluster, obj: Obj, status: Obj) -> None:
    meta = obj["metadata"]
    store.apply(obj, field_manager="test")
    store.patch_status(API, obj["kind"], meta["name"], meta["namespace"], status)


def scrape(engine: Engine) -> dict[str, set[tuple[tuple[tuple[str, str], ...], float]]]:
    text = generate_latest(engine.registry).decode()
    return {
        family.name: {(tuple(sorted(s.labels.items())), s.value) for s in family.samples}
        for family in text_string_to_metric_families(text)
    }


async def test_apps_rollouts_and_runs_appear_under_argo_names_and_labels(
    store: LocalCluster, engine: Engine
) -> None:
    put(store, {"apiVersion": API, "kind": "Application",
                "metadata": {"name": "web", "namespace": "argocd"},
                "spec": {"project": "prod",
                         "source": {"repoURL": "https://git.example/r.git", "path": "web"},
                         "destination": {"server": "https://kubernetes.default.svc",
                                         "namespace": "shop"},
                         "syncPolicy": {"automated": {}}}},
        {"sync": {"status": "OutOfSync"}, "health": {"status": "Healthy"},
         "conditions": [{"type": "SyncError", "message": "retry budget spent"}]})
    put(store, {"apiVersion": API, "kind": "Rollout",
                "metadata": {"name": "web", "namespace": "shop", "annotations": {
                    "headway.dev/git-convergence": json.dumps({"result": "Refused"})}},
                "spec": {"replicas": 4, "strategy": {"canary": {"trafficRouting": {
                    "istio": {}}}}}},
        {"phase": "Degraded", "abort": True, "availableReplicas": 4})
    put(store, {"apiVersion": API, "kind": "AnalysisRun",
                "metadata": {"name": "web-2-1", "namespace": "shop"},
                "spec": {"metrics": [{"name": "errors", "provider": {"prometheus": {}}}]}},
        {"phase": "Inconclusive", "metricResults": [{"name": "errors", "phase": "Inconclusive"}]})
    await engine.step()
    got = scrape(engine)
    app = {("dest_namespace", "shop"), ("dest_server", "https://kubernetes.default.svc"),
           ("health_status", "Healthy"), ("name", "web"), ("namespace", "argocd"),
           ("operation", ""), ("project", "prod"), ("repo", "https://git.example/r.git"),
           ("sync_status", "OutOfSync"), ("autosync_enabled", "true")}
    assert got["argocd_app_info"] == {(tuple(sorted(app)), 1.0)}
    assert (("condition", "SyncError"), ("name", "web"), ("namespace", "argocd"),
            ("project", "prod")) in {labels for labels, _ in got["argocd_app_condition"]}
    assert got["rollout_info"] == {((("name", "web"), ("namespace", "shop"),
                                     ("phase", "Degraded"), ("strategy", "canary"),
                                     ("traffic_router", "istio")), 1.0)}
    assert got["headway_rollout_aborted"] == {((("name", "web"), ("namespace", "shop")), 1.0)}
    assert got["headway_rollout_git_revert"] == {
        ((("name", "web"), ("namespace", "shop"), ("result", "Refused")), 1.0)}
    assert got["analysis_run_info"] == {
        ((("name", "web-2-1"), ("namespace", "shop"), ("phase", "Inconclusive")), 1.0)}
    phases = {dict(labels)["phase"]: value for labels, value in got["analysis_run_metric_phase"]}
    assert phases["Inconclusive"] == 1.0 and phases["Successful"] == 0.0 and len(phases) == 6
    assert {dict(labels)["type"] for labels, _ in got["analysis_run_metric_type"]} == {
        "prometheus"}


async def test_a_deleted_object_leaves_the_metrics(store: LocalCluster, engine: Engine) -> None:
    put(store, {"apiVersion": API, "kind": "Rollout",
                "metadata": {"name": "web", "namespace": "shop"}, "spec": {}}, {"phase": "Healthy"})
    await engine.step()
    assert scrape(engine)["rollout_info"]
    store.delete(API, "Rollout", "web", "shop")
    await engine.step()
    assert scrape(engine).get("rollout_info", set()) == set()


async def test_out_of_sync_and_a_waiting_wave_are_timed_on_the_clock(
    store: LocalCluster, engine: Engine, clock: VirtualClock
) -> None:
    app = {"apiVersion": API, "kind": "Application",
           "metadata": {"name": "web", "namespace": "argocd"}, "spec": {"project": "default"}}
    running = {"phase": "Running", "wave": {"phase": "Sync", "wave": 1, "applied": True}}
    put(store, app, {"sync": {"status": "OutOfSync"}, "operationState": running})
    await engine.step()
    clock.advance(90)
    put(store, app, {"sync": {"status": "OutOfSync"}, "operationState": running,
                     "health": {"status": "Progressing"}})  # a change: the clocks go on
    await engine.step()
    clock.advance(30)
    got = scrape(engine)
    assert got["headway_app_out_of_sync_seconds"] == {
        ((("name", "web"), ("namespace", "argocd")), 120.0)}
    assert got["headway_app_sync_wave_waiting_seconds"] == {
        ((("name", "web"), ("namespace", "argocd"), ("phase", "Sync"), ("wave", "1")), 120.0)}
    passed = {**running, "wave": {"phase": "Sync", "wave": 1, "applied": True, "passed": True}}
    put(store, app, {"sync": {"status": "Synced"}, "operationState": passed})
    await engine.step()
    got = scrape(engine)
    assert got.get("headway_app_out_of_sync_seconds", set()) == set()
    assert got.get("headway_app_sync_wave_waiting_seconds", set()) == set()


async def test_a_runs_measured_value_and_counts_are_metrics(
    store: LocalCluster, engine: Engine
) -> None:
    measured = [{"phase": "Successful", "value": "[0.01]"}, {"phase": "Failed", "value": "[0.09]"}]
    put(store, {"apiVersion": API, "kind": "AnalysisRun",
                "metadata": {"name": "web-2-1", "namespace": "shop"},
                "spec": {"metrics": [{"name": "errors", "provider": {"prometheus": {}}},
                                     {"name": "smoke", "provider": {"web": {}}}]}},
        {"phase": "Failed", "metricResults": [
            {"name": "errors", "phase": "Failed", "count": 2, "successful": 1, "failed": 1,
             "measurements": measured},
            {"name": "smoke", "phase": "Successful", "count": 1, "successful": 1,
             "measurements": [{"phase": "Successful", "value": '{"ok": true}'}]}]})
    await engine.step()
    got = scrape(engine)
    assert got["headway_analysis_run_metric_value"] == {
        ((("metric", "errors"), ("name", "web-2-1"), ("namespace", "shop")), 0.09)}
    counts = {(dict(labels)["metric"], dict(labels)["phase"]): value
              for labels, value in got["headway_analysis_run_metric_measurements"]}
    assert counts[("errors", "Failed")] == 1.0 and counts[("errors", "Successful")] == 1.0
    assert counts[("smoke", "Successful")] == 1.0 and counts[("smoke", "Error")] == 0.0


async def test_application_sets_appear_under_argo_names(
    store: LocalCluster, engine: Engine
) -> None:
    put(store, {"apiVersion": API, "kind": "ApplicationSet",
                "metadata": {"name": "addons", "namespace": "argocd"},
                "spec": {"generators": [], "template": {}}},
        {"conditions": [{"type": "ResourcesUpToDate", "status": "False"}],
         "resources": [{"name": "a"}, {"name": "b"}]})
    await engine.step()
    got = scrape(engine)
    assert got["argocd_appset_info"] == {
        ((("name", "addons"), ("namespace", "argocd"), ("resource_update_status", "False")), 1.0)}
    assert got["argocd_appset_owned_applications"] == {
        ((("name", "addons"), ("namespace", "argocd")), 2.0)}


async def test_a_canarys_current_step_and_step_count_are_metrics(
    store: LocalCluster, engine: Engine
) -> None:
    steps = [{"setWeight": 20}, {"pause": {}}, {"setWeight": 60}]
    put(store, {"apiVersion": API, "kind": "Rollout",
                "metadata": {"name": "web", "namespace": "shop"},
                "spec": {"strategy": {"canary": {"steps": steps}}}},
        {"phase": "Paused", "currentStepIndex": 1})
    put(store, {"apiVersion": API, "kind": "Rollout",
                "metadata": {"name": "bg", "namespace": "shop"},
                "spec": {"strategy": {"blueGreen": {"activeService": "bg"}}}},
        {"phase": "Healthy"})
    await engine.step()
    got = scrape(engine)
    key = (("name", "web"), ("namespace", "shop"))
    assert got["headway_rollout_step_index"] == {(key, 1.0)}
    assert got["headway_rollout_steps"] == {(key, 3.0)}


async def test_a_promotion_held_at_a_gate_is_timed_from_its_own_record(
    store: LocalCluster, engine: Engine, clock: VirtualClock
) -> None:
    started = format_time(clock.now())
    promotion = {"apiVersion": "headway.dev/v1alpha1", "kind": "Promotion",
                 "metadata": {"name": "web-prod-1", "namespace": "argocd"},
                 "spec": {"environment": "prod", "requestedAt": started}}
    store.apply(promotion, field_manager="test")
    clock.advance(40)
    store.patch_status("headway.dev/v1alpha1", "Promotion", "web-prod-1", "argocd", {
        "phase": "AwaitingApproval",
        "approval": {"requestedAt": format_time(clock.now()), "deadline": started}})
    await engine.step()
    clock.advance(300)
    labels = (("environment", "prod"), ("gate", "AwaitingApproval"), ("name", "web-prod-1"),
              ("namespace", "argocd"))
    assert scrape(engine)["headway_promotion_gate_waiting_seconds"] == {(labels, 300.0)}
    store.patch_status("headway.dev/v1alpha1", "Promotion", "web-prod-1", "argocd",
                       {"phase": "Committed"})
    await engine.step()
    assert scrape(engine).get("headway_promotion_gate_waiting_seconds", set()) == set()
