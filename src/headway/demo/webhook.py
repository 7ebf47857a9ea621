"""The demo's webhook receiver: a real HTTP server on 127.0.0.1 that records which
notification triggers it heard, so the demo can show the bad release being announced.

The Rollout in examples/demo subscribes the service `demo` to on-rollout-aborted and
on-revert-committed; `install` writes that service into the Argo Rollouts notifications
ConfigMap, pointing at this receiver.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from headway.cluster.protocol import Cluster

__all__ = ["DEMO_TRIGGERS", "DemoWebhook"]

DEMO_TRIGGERS = ("on-rollout-aborted", "on-revert-committed")
_NAMESPACE = "argo-rollouts"
_CONFIGMAP = "argo-rollouts-notification-configmap"


class DemoWebhook:
    def __init__(self) -> None:
        self._heard: list[str] = []
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    trigger = str(json.loads(self.rfile.read(length)).get("trigger", ""))
                except ValueError:
                    trigger = ""
                with receiver._lock:
                    receiver._heard.append(trigger)
                self.send_response(200)
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/"

    def install(self, cluster: Cluster) -> None:
        """Point the `demo` webhook service of the Rollouts notifications at this receiver."""
        namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": _NAMESPACE}}
        configmap = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": _CONFIGMAP, "namespace": _NAMESPACE},
            "data": {"service.webhook.demo": f"url: {self.url}\n"},
        }
        for obj in (namespace, configmap):
            cluster.apply(obj, field_manager="headway-demo")

    def heard(self) -> list[str]:
        with self._lock:
            return list(self._heard)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
