"""The Eviction subresource honours PodDisruptionBudgets (429 when one would break), and
the budget's status is what the runtime's controller writes."""

from __future__ import annotations

from typing import Any

import httpx2

from headway.clock import SystemClock
from headway.cluster.local.workloads.disruption_budgets import sync_disruption_budgets
from headway.health import assess
from headway.health.status import HealthStatus
from headway.model.obj import Obj
from kubeapi.conftest import Api

PODS = "/api/v1/namespaces/default/pods"


def pod(name: str, *, app: str = "web") -> Obj:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": {"app": app}},
            "spec": {"containers": [{"name": "main", "image": "web"}]}}


def running(api: Api, name: str, *, ready: bool = True, app: str = "web") -> None:
    api.store.create(pod(name, app=app))
    api.store.patch_status("v1", "Pod", name, "default", {
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]})


def budget(name: str = "web", **spec: Any) -> Obj:
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, **spec}}


def evict(api: Api, name: str) -> httpx2.Response:
    return httpx2.post(f"{api.url}{PODS}/{name}/eviction", json={
        "apiVersion": "policy/v1", "kind": "Eviction",
        "metadata": {"name": name, "namespace": "default"}})


def gone(api: Api, name: str) -> bool:
    return all(p["metadata"]["name"] != name for p in api.store.list("v1", "Pod"))


def test_an_eviction_that_would_break_the_budget_is_refused_with_429(api: Api) -> None:
    for name in ("web-a", "web-b", "web-c"):
        running(api, name)
    api.store.create(budget(minAvailable=2))
    assert evict(api, "web-a").status_code == 201
    assert gone(api, "web-a")
    refused = evict(api, "web-b")
    assert refused.status_code == 429
    body = refused.json()
    assert body["reason"] == "TooManyRequests"
    assert body["details"]["causes"] == [{
        "reason": "DisruptionBudget",
        "message": "The disruption budget web needs 2 healthy pods and has 2 currently"}]
    assert not gone(api, "web-b")


def test_max_unavailable_percent_and_a_not_ready_pod(api: Api) -> None:
    running(api, "web-a")
    running(api, "web-b", ready=False)
    api.store.create(budget(maxUnavailable="50%"))  # 2 expected, 1 may be down: 1 desired
    assert evict(api, "web-a").status_code == 429  # the one healthy Pod
    # web-b is not Ready and the budget is met (1 healthy of 1 desired): it may go
    assert evict(api, "web-b").status_code == 201
    # Alone, web-a is 1 expected of which ceil(50%) = 1 may be down: 0 desired, it may go.
    assert evict(api, "web-a").status_code == 201


def test_unselected_pods_and_unknown_pods(api: Api) -> None:
    running(api, "other", app="other")
    api.store.create(budget(minAvailable=5))
    assert evict(api, "other").status_code == 201
    assert evict(api, "nobody").status_code == 404


def test_two_budgets_on_one_pod_are_an_error(api: Api) -> None:
    running(api, "web-a")
    running(api, "web-b")
    api.store.create(budget("one", minAvailable=0))
    api.store.create(budget("two", minAvailable=0))
    answer = evict(api, "web-a")
    assert answer.status_code == 500 and "more than one PodDisruptionBudget" in answer.text


def test_budget_status_and_health(api: Api) -> None:
    for name in ("web-a", "web-b"):
        running(api, name)
    running(api, "web-c", ready=False)
    api.store.create(budget(minAvailable="50%"))  # ceil(1.5) = 2 of 3
    unwritten = api.store.get("policy/v1", "PodDisruptionBudget", "web", "default")
    assert assess(unwritten).status is HealthStatus.PROGRESSING
    sync_disruption_budgets(api.store, SystemClock())
    live = api.store.get("policy/v1", "PodDisruptionBudget", "web", "default")
    status = live["status"]
    assert (status["expectedPods"], status["currentHealthy"], status["desiredHealthy"],
            status["disruptionsAllowed"]) == (3, 2, 2, 0)
    assert status["conditions"][0]["reason"] == "InsufficientPods"
    assert assess(live).status is HealthStatus.HEALTHY  # Argo CD: a budget waiting is normal
    api.store.patch_status("v1", "Pod", "web-c", "default", {
        "phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]})
    sync_disruption_budgets(api.store, SystemClock())
    live = api.store.get("policy/v1", "PodDisruptionBudget", "web", "default")
    assert live["status"]["disruptionsAllowed"] == 1
    assert live["status"]["conditions"][0]["reason"] == "SufficientPods"
