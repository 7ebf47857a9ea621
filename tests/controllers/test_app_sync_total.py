"""`argocd_app_sync_total`: each sync operation counted once, when it is seen to end."""

from __future__ import annotations

from prometheus_client import generate_latest

from headway.controllers.app.metrics import AppMetrics, AppSample


def sample(phase: str, started: str) -> AppSample:
    return AppSample(
        name="shop", namespace="argocd", project="default", sync_status="Synced",
        health_status="Healthy", operation=phase, budget_exhausted=False,
        operation_started=started, dest_server="https://kubernetes.default.svc",
    )  # fmt: skip


def counted(metrics: AppMetrics) -> dict[str, float]:
    text = generate_latest(metrics.registry).decode()
    return {
        line.split('phase="')[1].split('"')[0]: float(line.split()[-1])
        for line in text.splitlines()
        if line.startswith("argocd_app_sync_total{")
    }


def test_an_operation_counts_once_when_it_ends_however_often_it_is_seen() -> None:
    metrics = AppMetrics()
    metrics.observe(sample("", ""))
    metrics.observe(sample("Running", "t1"))
    for _ in range(3):
        metrics.observe(sample("Succeeded", "t1"))
    metrics.observe(sample("Failed", "t2"))  # the next one, seen only after it ended
    metrics.observe(sample("Failed", "t2"))
    assert counted(metrics) == {"Succeeded": 1.0, "Failed": 1.0}


def test_an_operation_that_ended_before_the_first_look_is_not_counted_after_a_restart() -> None:
    metrics = AppMetrics()
    metrics.observe(sample("Succeeded", "t1"))
    metrics.observe(sample("Succeeded", "t1"))
    assert counted(metrics) == {}
    metrics.observe(sample("Error", "t2"))
    assert counted(metrics) == {"Error": 1.0}
