"""A tiny HTTP workload for the local runtime and the demo. Standard library only.

Environment:
  PORT                 port to listen on (127.0.0.1); default 8080
  VERSION              version to report; defaults to HEADWAY_IMAGE_TAG, then "dev"
  ERROR_RATE           fraction of `/` requests answered with 500 (0.0-1.0); default 0
  LATENCY_MS           extra delay before answering `/`, in milliseconds; default 0
  READY_AFTER_SECONDS  `/readyz` answers 503 until this many seconds after start; default 0
  HOSTNAME / POD_NAME  the name reported by `/` (the runtime sets HOSTNAME to the pod name)

Endpoints: `/` answers "<version> <pod>" (500 at ERROR_RATE), `/healthz` always 200 while
the process serves, `/readyz` 200 once ready. SIGTERM stops accepting, lets requests in
flight finish and exits 0.
"""

from __future__ import annotations

import os
import random
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import FrameType


def _float_env(name: str, default: float) -> float:
    raw = os.environ.get(name, "")
    if not raw:
        return default
    try:
        return float(raw)
    except ValueError:
        sys.exit(f"server.py: {name}={raw!r} is not a number")


VERSION = os.environ.get("VERSION") or os.environ.get("HEADWAY_IMAGE_TAG") or "dev"
POD = os.environ.get("POD_NAME") or os.environ.get("HOSTNAME") or "local"
ERROR_RATE = _float_env("ERROR_RATE", 0.0)
LATENCY_MS = _float_env("LATENCY_MS", 0.0)
READY_AFTER = _float_env("READY_AFTER_SECONDS", 0.0)
STARTED = time.monotonic()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if path == "/healthz":
            self._answer(200, "ok")
        elif path == "/readyz":
            ready = time.monotonic() - STARTED >= READY_AFTER
            self._answer(200 if ready else 503, "ready" if ready else "not ready")
        elif path == "/":
            if LATENCY_MS > 0:
                time.sleep(LATENCY_MS / 1000.0)
            failed = random.random() < ERROR_RATE
            self._answer(500 if failed else 200, f"{VERSION} {POD}")
        else:
            self._answer(404, "not found")

    def _answer(self, code: int, text: str) -> None:
        body = (text + "\n").encode()
        self.send_response(code)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Version", VERSION)
        # One request per connection, so SIGTERM never waits on an idle keep-alive client.
        self.send_header("Connection", "close")
        self.close_connection = True
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        sys.stderr.write(f"{self.address_string()} {format % args}\n")


def main() -> None:
    port = int(os.environ.get("PORT", "8080"))
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = False  # join request threads on close: finish what is in flight

    def on_term(signum: int, frame: FrameType | None) -> None:
        # shutdown() blocks until serve_forever returns, so call it from another thread.
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    print(f"serving version {VERSION} as {POD} on 127.0.0.1:{port}", flush=True)
    server.serve_forever(poll_interval=0.1)
    server.server_close()
    print("stopped", flush=True)


if __name__ == "__main__":
    main()
