"""Real loopback servers for notification tests: an HTTP receiver and an SMTP server."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from email import message_from_bytes
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from aiosmtpd.controller import Controller


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: str


@dataclass
class Receiver:
    """Answers each request with the next of `statuses` (then 200), recording it first.
    `hold` (when set by a test) keeps requests waiting until it is released."""

    url: str = ""
    requests: list[Request] = field(default_factory=list)
    statuses: list[int] = field(default_factory=list)
    answer: bytes = b"{}"
    hold: threading.Event | None = None
    arrived: threading.Event = field(default_factory=threading.Event)


def serve_receiver() -> Iterator[Receiver]:
    receiver = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def _any(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length).decode()
            receiver.requests.append(Request(self.command, self.path, dict(self.headers), body))
            receiver.arrived.set()
            if receiver.hold is not None:
                receiver.hold.wait(30)
            status = receiver.statuses.pop(0) if receiver.statuses else 200
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(receiver.answer)

        do_POST = do_PUT = do_GET = _any  # noqa: N815 (BaseHTTPRequestHandler names)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    receiver.url = f"http://127.0.0.1:{server.server_address[1]}"
    yield receiver
    if receiver.hold is not None:
        receiver.hold.set()
    server.shutdown()
    server.server_close()


@dataclass
class Mailbox:
    port: int = 0
    messages: list[Message] = field(default_factory=list)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
        self.messages.append(message_from_bytes(envelope.content))
        return "250 OK"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve_smtp() -> Iterator[Mailbox]:
    mailbox = Mailbox(port=free_port())
    controller = Controller(mailbox, hostname="127.0.0.1", port=mailbox.port)
    controller.start()
    yield mailbox
    controller.stop()


class RolloutNotifier:
    """The notifications controller's event side over `cluster`, configured (as Argo Rollouts
    users do, in `argo-rollouts/argo-rollouts-notification-configmap`) with one webhook."""

    def __init__(self, cluster: Any, clock: Any, http: Any, state_dir: Path, url: str) -> None:
        from prometheus_client.registry import CollectorRegistry

        from headway.controllers.notifications.controller import EventNotifications, Notifications

        for obj in (
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "argo-rollouts"}},
            {"apiVersion": "v1", "kind": "ConfigMap",
             "metadata": {"name": "argo-rollouts-notification-configmap",
                          "namespace": "argo-rollouts"},
             "data": {"service.webhook.receiver": f"url: {url}\n"}},
        ):
            cluster.apply(obj, field_manager="test", force=True)
        self.cluster = cluster
        self.core = Notifications(cluster=cluster, clock=clock, http=http, state_dir=state_dir,
                                  registry=CollectorRegistry())
        self.events = EventNotifications(self.core)

    def step_all(self) -> None:
        """One step for every Event the controller cares about, as the manager would."""
        for event in self.cluster.list("v1", "Event"):
            for key in self.events.keys_for(event):
                self.events.step(key)


def subscribe(obj: dict[str, Any], *triggers: str) -> dict[str, Any]:
    """`obj` with `subscribe.<trigger>.receiver` annotations."""
    annotations = obj.setdefault("metadata", {}).setdefault("annotations", {})
    for trigger in triggers:
        annotations[f"notifications.argoproj.io/subscribe.{trigger}.receiver"] = ""
    return obj
