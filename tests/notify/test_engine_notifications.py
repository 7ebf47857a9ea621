"""The engine builds the notifications loop beside the others: a manager-driven pass over a
store sends on-sync-failed to a real receiver, and the delivery counts on `/metrics`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
from headway.engine import Engine, EngineSettings, Loop
from notification_receivers import Receiver, serve_receiver
from polling import eventually

API = "argoproj.io/v1alpha1"


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    yield from serve_receiver()


async def test_an_engine_pass_sends_what_an_application_subscribed_to(
    tmp_path: Path, clock: VirtualClock, receiver: Receiver
) -> None:
    store = LocalCluster(tmp_path / "cluster.db", clock)
    for obj in (
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "argocd"}},
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": {"name": "argocd-notifications-cm", "namespace": "argocd"},
         "data": {"service.webhook.receiver": f"url: {receiver.url}\n"}},
        {"apiVersion": API, "kind": "Application",
         "metadata": {"name": "web", "namespace": "argocd", "annotations": {
             "notifications.argoproj.io/subscribe.on-sync-failed.receiver": ""}},
         "spec": {"project": "default"}},
    ):
        store.apply(obj, field_manager="test")
    store.patch_status(API, "Application", "web", "argocd",
                       {"operationState": {"phase": "Failed", "message": "boom"}})
    settings = EngineSettings(state_dir=tmp_path / "state",
                              loops=frozenset({Loop.NOTIFICATIONS}))
    async with httpx2.AsyncClient() as http:
        engine = Engine(cluster=store, clock=clock, http=http, settings=settings)
        await engine.step()
        await eventually(lambda: receiver.requests, timeout=10, what="the webhook call")
        assert json.loads(receiver.requests[0].body)["trigger"] == "on-sync-failed"
        labels = {"trigger": "on-sync-failed", "template": "app-sync-failed",
                  "notifier": "receiver", "succeeded": "true"}
        await eventually(
            lambda: engine.registry.get_sample_value(
                "argocd_notifications_deliveries_total", labels) == 1.0,
            timeout=10, what="the delivery counted",
        )
        await engine.controller("notifications-apps")._core.worker.stop()  # type: ignore[attr-defined]
