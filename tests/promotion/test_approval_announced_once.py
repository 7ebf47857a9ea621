"""An approval request is announced exactly once, wherever a kill lands: one ApprovalRequested
Event on the Promotion and one on the environment's Application (count 1), and one
on-approval-requested notification to a real webhook receiver.

The kill lands at the controller's named points (`hook`), and right after the store accepted
the Application's Event (the store's apply raises once it has stored it): the window in which
the old controller had told the approvers and not yet recorded the request, so the resumed step
asked again, with a new deadline, and the approvers heard twice."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from prometheus_client.registry import CollectorRegistry
from promotion_harness import ARGO, NS, Harness

from headway.cluster.errors import ClusterError
from headway.controllers.notifications.controller import EventNotifications, Notifications
from headway.model.obj import Obj
from headway.promotion.controller import PromotionController
from notification_receivers import Receiver, serve_receiver
from polling import eventually


class Killed(BaseException):
    """The controller process dying: nothing after this point runs, nothing catches it."""


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    yield from serve_receiver()


@pytest.fixture
async def http() -> AsyncIterator[httpx2.AsyncClient]:
    async with httpx2.AsyncClient() as client:
        yield client


def _subscribe(h: Harness, url: str) -> None:
    h.store.apply(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "argocd-notifications-cm", "namespace": NS},
            "data": {"service.webhook.receiver": f"url: {url}\n"},
        },
        field_manager="test",
    )
    key = "notifications.argoproj.io/subscribe.on-approval-requested.receiver"
    h.store.apply(
        {
            "apiVersion": ARGO,
            "kind": "Application",
            "metadata": {"name": "web-prod", "namespace": NS, "annotations": {key: ""}},
        },
        field_manager="subscriber",
    )


def _kill_after_the_application_event(h: Harness) -> Callable[[], None]:
    """The store's apply raises right after it stored the Application's ApprovalRequested
    Event, once; returns what puts the plain apply back."""
    plain = h.store.apply
    fired: list[bool] = []

    def apply(obj: Obj, **kwargs: Any) -> Obj:
        stored = plain(obj, **kwargs)
        about = obj.get("involvedObject") or {}
        told = obj.get("reason") == "ApprovalRequested" and about.get("kind") == "Application"
        if told and not fired:
            fired.append(True)
            raise Killed()
        return stored

    h.store.apply = apply  # type: ignore[method-assign]

    def restore() -> None:
        h.store.apply = plain  # type: ignore[method-assign]

    return restore


def _killed_controller(h: Harness, point: str) -> tuple[PromotionController, Callable[[], None]]:
    if point == "application-event-stored":
        return h.new_controller(), _kill_after_the_application_event(h)

    def kill(at: str) -> None:
        if at == point:
            raise Killed()

    return h.new_controller(hook=kill), lambda: None


def _approval_events(h: Harness) -> list[Obj]:
    return [e for e in h.store.list("v1", "Event") if e.get("reason") == "ApprovalRequested"]


@pytest.mark.parametrize(
    "point",
    [
        "outcome-told",
        "approval-recorded",
        "application-event-stored",
        "approval-announced",
        "after-status",
    ],
)
async def test_killed_at_each_point_the_approvers_hear_once(
    tmp_path: Path, receiver: Receiver, http: httpx2.AsyncClient, point: str
) -> None:
    h = Harness(tmp_path)
    _subscribe(h, receiver.url)
    core = Notifications(
        cluster=h.store, clock=h.clock, http=http, state_dir=tmp_path / "state",
        registry=CollectorRegistry(),
    )
    notifier = EventNotifications(core)
    h.promote("web-prod-1", "prod", "v2", origin="rollback")
    controller, restore = _killed_controller(h, point)
    with pytest.raises(Killed):
        h.step("web-prod-1", controller)
    restore()
    h.advance(5)  # the restart comes later: a request made again would have a new deadline
    for _ in range(2):
        h.step("web-prod-1", h.new_controller())
        h.advance(30)
    assert h.phase("web-prod-1") == "AwaitingApproval"
    assert "announced" not in h.status("web-prod-1")["approval"]
    for _ in range(2):  # every Event, twice: a second pass over the same Event sends nothing
        for event in h.store.list("v1", "Event"):
            for key in notifier.keys_for(event):
                notifier.step(key)
    events = _approval_events(h)
    kinds = sorted(e["involvedObject"]["kind"] for e in events)
    assert kinds == ["Application", "Promotion"]
    assert [e["count"] for e in events] == [1, 1]
    await eventually(lambda: not core.state.outbox, timeout=10, what="every delivery")
    [request] = receiver.requests
    body = json.loads(request.body)
    assert body["trigger"] == "on-approval-requested"
    assert "headway approve web-prod-1" in body["message"]
    await core.worker.stop()


def test_a_request_asked_again_is_announced_again(tmp_path: Path) -> None:
    """Once per request, not once per promotion: the file changed under the gate, so the
    approvers are asked about the new file, and told so once more."""
    h = Harness(tmp_path)
    h.promote("web-prod-1", "prod", "v2", origin="rollback")
    h.step("web-prod-1")
    h.advance(10)
    h.env_repos["prod"].file_version = lambda: "blob-2"  # type: ignore[method-assign]
    h.step("web-prod-1")
    h.step("web-prod-1")
    assert h.status("web-prod-1")["approval"]["fileVersion"] == "blob-2"
    told = [e for e in _approval_events(h) if e["involvedObject"]["kind"] == "Application"]
    assert sorted(e["count"] for e in told) == [1, 1]


def test_an_event_the_store_refuses_is_recorded_on_the_next_step(tmp_path: Path) -> None:
    """The request stays unannounced (`announced: false`) until its Events are stored."""
    h = Harness(tmp_path)
    h.promote("web-prod-1", "prod", "v2", origin="rollback")
    plain = h.store.apply

    def refuse_events(obj: Obj, **kwargs: Any) -> Obj:
        if obj.get("kind") == "Event":
            raise ClusterError("the API server is unavailable")
        return plain(obj, **kwargs)

    h.store.apply = refuse_events  # type: ignore[method-assign]
    h.step("web-prod-1")
    h.store.apply = plain  # type: ignore[method-assign]
    assert h.phase("web-prod-1") == "AwaitingApproval"
    assert h.status("web-prod-1")["approval"]["announced"] is False
    assert _approval_events(h) == []
    h.advance(30)
    h.step("web-prod-1")
    assert "announced" not in h.status("web-prod-1")["approval"]
    assert sorted(e["involvedObject"]["kind"] for e in _approval_events(h)) == [
        "Application",
        "Promotion",
    ]
