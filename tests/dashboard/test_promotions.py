"""The Promotions page: what `headway promotions list` shows, and approve / deny through the
function `headway approve` calls, with its refusals (the author, someone off the list)."""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from dashboard_env import Served, serving

from headway.clock import SystemClock
from headway.cluster.local import LocalCluster
from headway.dashboard.web import CSRF_HEADER
from headway.promotion.record import API_VERSION, KIND, read_spec
from headway.promotion.requests import Request, request_promotion

PIPELINE: dict[str, Any] = {
    "apiVersion": "headway.dev/v1alpha1",
    "kind": "PromotionPipeline",
    "metadata": {"name": "web", "namespace": "argocd"},
    "spec": {
        "image": "registry.local/web",
        "environments": [
            {"name": "dev", "application": "web-dev",
             "target": {"file": "dev.yaml", "helm": {"key": "image.tag"}},
             "gate": {"approval": {"required": True, "approvers": ["lead", "dev"]}}},
        ],
    },
}


@pytest.fixture
def waiting(tmp_path: Path) -> Iterator[tuple[LocalCluster, Served, str]]:
    """A promotion of v2 into dev by `dev`, awaiting approval, and the dashboard over it."""
    store = LocalCluster(tmp_path / "cluster.db", SystemClock())
    store.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "argocd"}},
                field_manager="test")
    store.apply(copy.deepcopy(PIPELINE), field_manager="test")
    request = Request(pipeline="web", namespace="argocd", environment="dev", image="v2",
                      author="dev")
    spec = request_promotion(store, request, now=SystemClock().now())
    obj = store.get(API_VERSION, KIND, spec.name, "argocd")
    store.patch_status(API_VERSION, KIND, spec.name, "argocd", {
        "phase": "AwaitingApproval", "message": "waiting for an approver",
        "approval": {"requestedAt": obj["spec"]["requestedAt"],
                     "deadline": "2099-01-01T00:00:00Z"},
    })
    with serving(store, tmp_path / "state", clock=SystemClock()) as served:
        yield store, served, spec.name
    store.close()


def act(served: Served, name: str, verdict: str, *, who: str) -> httpx2.Response:
    client = httpx2.Client(base_url=served.url, timeout=30)
    client.post("/login", data={"token": served.token, "name": who})
    page = client.get("/promotions").text
    found = re.search(r'hx-headers=\'\{"X-CSRF-Token": "([^"]+)"\}\'', page)
    assert found is not None
    return client.post(f"/promotions/argocd/{name}/actions/{verdict}",
                       headers={CSRF_HEADER: found.group(1)})


def decisions(store: LocalCluster, name: str) -> list[tuple[str, str, str]]:
    spec = read_spec(store.get(API_VERSION, KIND, name, "argocd"))
    return [(d.verdict, d.by, d.via) for d in spec.decisions]


def test_the_page_lists_the_promotion_with_its_gate(
    waiting: tuple[LocalCluster, Served, str]
) -> None:
    _store, served, name = waiting
    page = httpx2.get(served.url + "/promotions", timeout=30).text
    row = re.search(rf'<tr data-promotion="argocd/{name}">(.*?)</tr>', page, re.S)
    assert row is not None
    assert "AwaitingApproval" in row.group(1) and "v2" in row.group(1)
    assert "Waiting, deadline 2099-01-01" in row.group(1)
    assert 'class="approve"' in row.group(1)


def test_the_author_cannot_approve_their_own_promotion(
    waiting: tuple[LocalCluster, Served, str]
) -> None:
    store, served, name = waiting
    answer = act(served, name, "approve", who="dev")
    assert answer.status_code == 409 and "refused" in answer.text
    assert decisions(store, name) == []


def test_someone_off_the_list_cannot_approve(waiting: tuple[LocalCluster, Served, str]) -> None:
    store, served, name = waiting
    answer = act(served, name, "approve", who="stranger")
    assert answer.status_code == 409
    assert decisions(store, name) == []


def test_an_approver_approves_and_it_is_recorded_as_theirs(
    waiting: tuple[LocalCluster, Served, str]
) -> None:
    store, served, name = waiting
    answer = act(served, name, "approve", who="lead")
    assert answer.status_code == 200 and "approved" in answer.text and "as lead" in answer.text
    assert decisions(store, name) == [("approve", "lead", "dashboard")]


def test_a_session_without_a_name_cannot_decide(
    waiting: tuple[LocalCluster, Served, str]
) -> None:
    store, served, name = waiting
    answer = act(served, name, "deny", who="")
    assert answer.status_code == 403 and "your name" in answer.text
    assert decisions(store, name) == []


def test_deciding_without_a_session_is_refused(waiting: tuple[LocalCluster, Served, str]) -> None:
    store, served, name = waiting
    answer = httpx2.post(f"{served.url}/promotions/argocd/{name}/actions/approve", timeout=30)
    assert answer.status_code == 401
    assert decisions(store, name) == []


def test_the_page_shows_each_pipeline_with_its_gates_and_newest_promotion(
    waiting: tuple[LocalCluster, Served, str]
) -> None:
    _store, served, _name = waiting
    page = httpx2.get(served.url + "/promotions", timeout=30).text
    pipeline = re.search(r'<div class="pipeline" data-pipeline="argocd/web">(.*?)</div>', page,
                         re.S)
    assert pipeline is not None
    stage = re.search(r'data-env="dev">(.*?)</td>', pipeline.group(1), re.S)
    assert stage is not None
    assert "app web-dev" in stage.group(1)
    assert "approval by lead, dev" in stage.group(1)
    assert "<code>registry.local/web:v2</code>" in stage.group(1)
    assert "AwaitingApproval" in stage.group(1)
