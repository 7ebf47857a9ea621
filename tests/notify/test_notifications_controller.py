"""The notifications controller against a real store, a real HTTP receiver and a real SMTP
server on loopback: delivery, retries on the virtual clock, dedup across a restart, no Secret
in anything written, and a step that never waits for a receiver."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from prometheus_client.registry import CollectorRegistry

from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
from headway.controllers.manager import ObjectKey
from headway.controllers.notifications.controller import AppNotifications, Notifications
from headway.model.obj import Obj
from notification_receivers import Mailbox, Receiver, free_port, serve_receiver, serve_smtp
from polling import eventually

API = "argoproj.io/v1alpha1"
TOKEN = "tok-5ec2e7-planted"
WEB = ObjectKey("argocd", "web")


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    yield from serve_receiver()


@pytest.fixture
def mailbox() -> Iterator[Mailbox]:
    yield from serve_smtp()


@pytest.fixture
async def http() -> AsyncIterator[httpx2.AsyncClient]:
    async with httpx2.AsyncClient() as client:
        yield client


class World:
    def __init__(self, tmp_path: Path, clock: VirtualClock, http: httpx2.AsyncClient) -> None:
        self.tmp_path, self.clock, self.http = tmp_path, clock, http
        self.cluster = LocalCluster(tmp_path / "cluster.db", clock)
        self.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "argocd"}})
        self.apply({"apiVersion": "v1", "kind": "Secret",
                    "metadata": {"name": "argocd-notifications-secret", "namespace": "argocd"},
                    "stringData": {"token": TOKEN}})
        self.start()

    def start(self) -> None:
        """(Re)start the controller, as a new process would: state from the state dir."""
        self.registry = CollectorRegistry()
        self.core = Notifications(cluster=self.cluster, clock=self.clock, http=self.http,
                                  state_dir=self.tmp_path / "state", registry=self.registry)
        self.apps = AppNotifications(self.core)

    def apply(self, obj: Obj) -> Obj:
        return self.cluster.apply(obj, field_manager="test", force=True)

    def configure(self, **data: str) -> None:
        self.apply({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": "argocd-notifications-cm", "namespace": "argocd"},
                    "data": data})

    def app(self, phase: str, *, annotations: dict[str, str], message: str = "") -> None:
        self.apply({"apiVersion": API, "kind": "Application",
                    "metadata": {"name": "web", "namespace": "argocd",
                                 "annotations": annotations},
                    "spec": {"project": "default"}})
        status = {"sync": {"status": "OutOfSync"}, "health": {"status": "Healthy"},
                  "operationState": {"phase": phase, "message": message}}
        self.cluster.patch_status(API, "Application", "web", "argocd", status)

    def sent(self, succeeded: str) -> float:
        value = self.registry.get_sample_value(
            "argocd_notifications_deliveries_total",
            {"trigger": "on-sync-failed", "template": "app-sync-failed", "notifier": "receiver",
             "succeeded": succeeded},
        )
        return value or 0.0


@pytest.fixture
async def world(tmp_path: Path, clock: VirtualClock, http: httpx2.AsyncClient
                ) -> AsyncIterator[World]:
    w = World(tmp_path, clock, http)
    yield w
    await w.core.worker.stop()


SUBSCRIBE = {"notifications.argoproj.io/subscribe.on-sync-failed.receiver": ""}


async def test_sync_failed_reaches_the_webhook_once_and_a_restart_does_not_resend(
    world: World, receiver: Receiver
) -> None:
    world.configure(**{"service.webhook.receiver": f"url: {receiver.url}/hook\n"})
    world.app("Failed", annotations=SUBSCRIBE, message="apply failed: quota")
    world.apps.step(WEB)
    await eventually(lambda: receiver.requests, timeout=10, what="the webhook call")
    body = json.loads(receiver.requests[0].body)
    assert (receiver.requests[0].path, body["trigger"], body["subject"]) == (
        "/hook", "on-sync-failed", "Application argocd/web"
    )
    assert body["message"] == "Sync of web Failed: apply failed: quota"
    # stopped only once the answer came back: a delivery cut short is sent again (at least once)
    await eventually(lambda: not world.core.state.outbox, timeout=10, what="the answer")
    await world.core.worker.stop()
    world.start()
    world.apps.step(WEB)
    assert await world.core.worker.deliver_due() == 0
    assert len(receiver.requests) == 1


async def test_a_failing_webhook_is_retried_with_backoff_on_the_clock(
    world: World, receiver: Receiver, clock: VirtualClock
) -> None:
    receiver.statuses = [503, 503]
    world.configure(**{"service.webhook.receiver": f"url: {receiver.url}\n"})
    world.app("Failed", annotations=SUBSCRIBE)
    t0 = clock.now().timestamp()
    world.apps.step(WEB)
    outbox = world.core.state.outbox
    await eventually(lambda: world.sent("false") == 1, timeout=10, what="the first failure")
    assert [(d.attempts, d.due_at - t0) for d in outbox.values()] == [(1, 1.0)]
    clock.advance(1)
    await eventually(lambda: world.sent("false") == 2, timeout=10, what="the second failure")
    assert [(d.attempts, d.due_at - t0) for d in outbox.values()] == [(2, 3.0)]
    clock.advance(1.5)
    assert await world.core.worker.deliver_due() == 0  # not due before its back-off ends
    clock.advance(0.5)
    await eventually(lambda: world.sent("true") == 1, timeout=10, what="the delivery")
    assert len(receiver.requests) == 3 and outbox == {}


async def test_a_step_does_not_wait_for_a_slow_receiver(world: World, receiver: Receiver) -> None:
    receiver.hold = threading.Event()
    world.configure(**{"service.webhook.receiver": f"url: {receiver.url}\n"})
    world.app("Failed", annotations=SUBSCRIBE)
    world.apps.step(WEB)  # a plain function: it only decides and queues
    assert receiver.requests == [] and len(world.core.state.outbox) == 1
    await eventually(receiver.arrived.is_set, timeout=10, what="the request in flight")
    assert world.sent("true") == 0 and len(world.core.state.outbox) == 1
    receiver.hold.set()
    await eventually(lambda: world.sent("true") == 1, timeout=10, what="the delivery")


async def test_argo_webhook_templates_and_secret_references(
    world: World, receiver: Receiver
) -> None:
    world.configure(**{
        "service.webhook.receiver": f"url: {receiver.url}\nheaders:\n"
        "- name: Authorization\n  value: Bearer $token\n",
        "template.app-sync-failed": "message: unused\nwebhook:\n  receiver:\n    method: PUT\n"
        "    path: /apps/{{.app.metadata.name}}\n"
        '    body: \'{"app": "{{.app.metadata.name}}", "url": "{{.context.argocdUrl}}"}\'\n',
        "context": "argocdUrl: https://cd.example\n",
    })
    world.app("Error", annotations=SUBSCRIBE)
    world.apps.step(WEB)
    await eventually(lambda: receiver.requests, timeout=10, what="the webhook call")
    request = receiver.requests[0]
    assert (request.method, request.path) == ("PUT", "/apps/web")
    assert json.loads(request.body) == {"app": "web", "url": "https://cd.example"}
    assert request.headers["Authorization"] == f"Bearer {TOKEN}"


async def test_email_through_a_real_smtp_server(world: World, mailbox: Mailbox) -> None:
    world.configure(**{
        "service.email": f"host: 127.0.0.1\nport: {mailbox.port}\nfrom: headway@example.com\n"
        "tls: none\n",
    })
    world.app("Failed", annotations={
        "notifications.argoproj.io/subscribe.on-sync-failed.email": "ops@example.com",
    }, message="hook failed")
    world.apps.step(WEB)
    await eventually(lambda: mailbox.messages, timeout=20, what="the email")
    mail = mailbox.messages[0]
    assert mail["To"] == "ops@example.com" and mail["Subject"] == "on-sync-failed web"
    assert "Sync of web Failed: hook failed" in str(mail.get_payload(decode=True).decode())


async def test_slack_posts_to_the_channel_with_the_token_from_the_secret(
    world: World, receiver: Receiver
) -> None:
    receiver.answer = b'{"ok": true}'
    world.configure(**{"service.slack": f"token: $token\napiURL: {receiver.url}/api\n"})
    world.app("Failed", annotations={
        "notifications.argoproj.io/subscribe.on-sync-failed.slack": "deploys",
    })
    world.apps.step(WEB)
    await eventually(lambda: receiver.requests, timeout=10, what="the Slack call")
    request = receiver.requests[0]
    assert request.path == "/api/chat.postMessage"
    assert request.headers["Authorization"] == f"Bearer {TOKEN}"
    assert json.loads(request.body)["channel"] == "deploys"


async def test_a_secret_never_reaches_logs_state_or_messages(
    world: World, receiver: Receiver, caplog: pytest.LogCaptureFixture, clock: VirtualClock
) -> None:
    closed = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    world.configure(**{"service.webhook.receiver": f"url: {closed}/hooks/$token\n"})
    world.app("Failed", annotations=SUBSCRIBE, message=f"git said: bad token {TOKEN}")
    caplog.set_level(logging.INFO)
    world.apps.step(WEB)
    await eventually(lambda: world.sent("false") == 1, timeout=10, what="the failure")
    state = (world.tmp_path / "state" / "notifications.json").read_text()
    delivery = next(iter(world.core.state.outbox.values()))
    written: list[Any] = [state, caplog.text, delivery.last_error, delivery.notification.message]
    assert not [text for text in written if TOKEN in text]
    assert "***" in delivery.last_error and "***" in delivery.notification.message


async def test_a_bad_service_setting_is_a_failed_delivery_and_the_worker_goes_on(
    world: World, receiver: Receiver
) -> None:
    world.configure(**{
        "service.webhook.receiver": f"url: {receiver.url}\nbasicAuth: {{username: u}}\n",
        "service.webhook.other": f"url: {receiver.url}/other\n",
    })
    world.app("Failed", annotations={
        **SUBSCRIBE, "notifications.argoproj.io/subscribe.on-sync-failed.other": "",
    })
    world.apps.step(WEB)
    await eventually(lambda: receiver.requests, timeout=10, what="the other service's call")
    await eventually(lambda: world.sent("false") == 1, timeout=10, what="the bad one failing")
    failed = [d for d in world.core.state.outbox.values() if d.attempts == 1]
    assert [d.last_error for d in failed] == ["receiver: KeyError: 'password'"]
    assert [r.path for r in receiver.requests] == ["/other"]


async def test_a_sync_writes_a_grafana_annotation_retried_after_a_failure(
    world: World, receiver: Receiver, clock: VirtualClock
) -> None:
    receiver.statuses = [503]
    receiver.answer = b'{"message": "Annotation added", "id": 7}'
    world.configure(**{"service.grafana": f"apiUrl: {receiver.url}/api\napiKey: $token\n"
                                          "dashboardUID: headway\n"})
    world.app("Failed", annotations={
        "notifications.argoproj.io/subscribe.on-sync-failed.grafana": "deploy|web"})
    world.apps.step(WEB)  # only queues: the worker posts it
    await eventually(lambda: len(receiver.requests) == 1, timeout=10, what="the first try")
    clock.advance(1)  # the outbox's first back-off
    await eventually(lambda: not world.core.state.outbox, timeout=10, what="the retry")
    first, second = receiver.requests
    assert (second.method, second.path) == ("POST", "/api/annotations")
    assert second.headers["Authorization"] == f"Bearer {TOKEN}"
    body = json.loads(second.body)
    assert (body["tags"], body["dashboardUID"], body["isRegion"]) == (
        ["deploy", "web"], "headway", False)
    assert body["text"].startswith("Sync of web Failed") and first.body == second.body
