"""A promotion stopping at an approval gate notifies: the ApprovalRequested Event on the
environment's Application fires on-approval-requested for its subscriptions (a real local
webhook receiver here), once."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx2
import pytest
from prometheus_client.registry import CollectorRegistry
from promotion_harness import ARGO, NS, Harness

from headway.controllers.notifications.controller import EventNotifications, Notifications
from notification_receivers import Receiver, serve_receiver
from polling import eventually


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    yield from serve_receiver()


@pytest.fixture
async def http() -> AsyncIterator[httpx2.AsyncClient]:
    async with httpx2.AsyncClient() as client:
        yield client


def _notifier(h: Harness, http: httpx2.AsyncClient, url: str, state: Path) -> Notifications:
    h.store.apply(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "argocd-notifications-cm", "namespace": NS},
            "data": {"service.webhook.receiver": f"url: {url}\n"},
        },
        field_manager="test",
    )
    app = h.store.get(ARGO, "Application", "web-prod", NS)
    key = "notifications.argoproj.io/subscribe.on-approval-requested.receiver"
    h.store.apply(
        {
            "apiVersion": ARGO,
            "kind": "Application",
            "metadata": {"name": "web-prod", "namespace": NS, "annotations": {key: ""}},
        },
        field_manager="subscriber",
    )
    assert app["metadata"]["name"] == "web-prod"
    return Notifications(
        cluster=h.store, clock=h.clock, http=http, state_dir=state, registry=CollectorRegistry()
    )


async def test_the_prod_gate_notifies_its_subscribers_once(
    tmp_path: Path, receiver: Receiver, http: httpx2.AsyncClient
) -> None:
    h = Harness(tmp_path)
    core = _notifier(h, http, receiver.url, tmp_path / "state")
    events = EventNotifications(core)
    h.promote("web-prod-1", "prod", "v2", origin="rollback")
    h.step("web-prod-1")
    assert h.phase("web-prod-1") == "AwaitingApproval"
    for _ in range(2):  # a second pass over the same Event sends nothing more
        for event in h.store.list("v1", "Event"):
            for key in events.keys_for(event):
                events.step(key)
    await eventually(lambda: not core.state.outbox, timeout=10, what="every delivery")
    [request] = receiver.requests
    body = json.loads(request.body)
    assert body["trigger"] == "on-approval-requested"
    assert body["subject"] == "Application argocd/web-prod"
    assert "web-prod-1" in body["message"] and "headway approve web-prod-1" in body["message"]
    await core.worker.stop()


async def test_a_failed_promotion_notifies_its_environments_subscribers(
    tmp_path: Path, receiver: Receiver, http: httpx2.AsyncClient
) -> None:
    h = Harness(tmp_path)
    core = _notifier(h, http, receiver.url, tmp_path / "state")
    key = "notifications.argoproj.io/subscribe.on-promotion-failed.receiver"
    h.store.apply(
        {"apiVersion": ARGO, "kind": "Application",
         "metadata": {"name": "web-dev", "namespace": NS, "annotations": {key: ""}}},
        field_manager="subscriber",
    )
    events = EventNotifications(core)
    h.promote("web-dev-1", "dev", "v2")
    h.step("web-dev-1")
    h.advance(600)  # never Healthy on v2 within healthyWithin
    h.step("web-dev-1")
    h.step("web-dev-1")
    assert h.phase("web-dev-1") == "Failed"
    for event in h.store.list("v1", "Event"):
        for event_key in events.keys_for(event):
            events.step(event_key)
    await eventually(lambda: not core.state.outbox, timeout=10, what="every delivery")
    [request] = receiver.requests
    body = json.loads(request.body)
    assert body["trigger"] == "on-promotion-failed"
    assert body["subject"] == "Application argocd/web-dev"
    assert "within 600s" in body["message"] and "pipeline stopped" in body["message"]
    await core.worker.stop()
