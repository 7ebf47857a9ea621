"""The dashboard with 1,000 Applications loaded: page render time and the event stream's
update latency, as ratios against serving a static file from the same server in the same run.

A real server (`DashboardServer`, uvicorn) on loopback over a real store; requests from a
plain HTTP client in this process. Figures are medians of N rounds, interleaved so machine
load hits every case alike.

* static: `GET /static/dashboard.css` (the yardstick: the server's floor for one request);
* pages: the Applications list (1,000 rows), one Application, one row of the list (what an
  open list fetches when one Application changes), the Rollouts list;
* update latency: from the store write of an Application's status to the `changed` event
  naming it on an open `/events` stream (the store's watch, through the hub, to the wire).

    .venv/bin/python bench/bench_dashboard.py [--apps 1000] [--runs 21]
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import socket
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx2

from headway.clock import SystemClock, VirtualClock
from headway.cluster.local import LocalCluster
from headway.dashboard.server import DashboardServer

API = "argoproj.io/v1alpha1"


def load_apps(cluster: LocalCluster, count: int) -> None:
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "argocd"}}
    cluster.apply(namespace, field_manager="bench")
    for i in range(count):
        app = {
            "apiVersion": API, "kind": "Application",
            "metadata": {"name": f"app-{i:04d}", "namespace": "argocd"},
            "spec": {"project": "default",
                     "source": {"repoURL": "https://git.example.com/r.git", "path": f"a/{i}"},
                     "destination": {"server": "https://kubernetes.default.svc",
                                     "namespace": "default"}},
        }
        cluster.apply(app, field_manager="bench")
        cluster.patch_status(API, "Application", app["metadata"]["name"], "argocd", status(i, 0))


def status(i: int, round_: int) -> dict[str, Any]:
    return {
        "sync": {"status": "Synced", "revision": f"{round_:040x}"},
        "health": {"status": "Healthy"},
        "reconciledAt": f"2026-01-01T00:{round_ // 60 % 60:02d}:{round_ % 60:02d}Z",
        "resources": [{"group": "apps", "version": "v1", "kind": "Deployment",
                       "namespace": "default", "name": f"web-{i}", "status": "Synced",
                       "syncWave": 0, "health": {"status": "Healthy"}}],
    }


class Served:
    """The dashboard on its own event loop thread, so this thread can block on requests."""

    def __init__(self, cluster: LocalCluster, state_dir: Path) -> None:
        self.loop = asyncio.new_event_loop()
        self.ready, self.done = threading.Event(), threading.Event()
        self.url = ""
        self.thread = threading.Thread(target=self._run, args=(cluster, state_dir), daemon=True)
        self.thread.start()
        self.ready.wait(60)

    def _run(self, cluster: LocalCluster, state_dir: Path) -> None:
        async def main() -> None:
            server = DashboardServer(cluster=cluster, clock=VirtualClock(), state_dir=state_dir)
            self.url = (await server.start()).url.rstrip("/")
            self.ready.set()
            while not self.done.is_set():
                await asyncio.sleep(0.05)
            await server.stop()

        self.loop.run_until_complete(main())

    def stop(self) -> None:
        self.done.set()
        self.thread.join(30)


def connect(url: str) -> http.client.HTTPConnection:
    """One kept-alive connection with Nagle off, so a request is one segment and no delayed
    ACK (40 ms) sits in every figure (httpx2's pooled client showed exactly that)."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=60)
    connection.connect()
    assert connection.sock is not None
    connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return connection


def request_s(connection: http.client.HTTPConnection, path: str) -> float:
    started = time.perf_counter()
    connection.request("GET", path)
    answer = connection.getresponse()
    answer.read()
    if answer.status != 200:
        raise RuntimeError(f"GET {path}: {answer.status}")
    return time.perf_counter() - started


def update_latency_s(cluster: LocalCluster, url: str, rounds: int) -> list[float]:
    """Write a status, wait for the event naming it; one stream for every round."""
    taken: list[float] = []
    with httpx2.stream("GET", url + "/events", timeout=60) as stream:
        lines = stream.iter_lines()
        next(line for line in lines if line.startswith(": connected"))
        for r in range(1, rounds + 1):
            name = f"app-{r % 1000:04d}"
            started = time.perf_counter()
            cluster.patch_status(API, "Application", name, "argocd", status(r % 1000, r))
            for line in lines:
                if line.startswith("data: ") and f"app/argocd/{name}" in json.loads(line[6:]):
                    taken.append(time.perf_counter() - started)
                    break
    return taken


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--apps", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cluster = LocalCluster(Path(tmp) / "cluster.db", SystemClock())
        began = time.perf_counter()
        load_apps(cluster, args.apps)
        print(f"loaded {args.apps} Applications in {time.perf_counter() - began:.1f}s")
        served = Served(cluster, Path(tmp) / "state")
        cases = {
            "static file (dashboard.css)": "/static/dashboard.css",
            f"Applications list ({args.apps} rows)": "/applications",
            "one Application": "/applications/argocd/app-0001",
            "one row of the list (what a change refetches)": "/applications/argocd/app-0001/row",
            "Rollouts list (empty)": "/rollouts",
        }
        samples: dict[str, list[float]] = {label: [] for label in cases}
        client = connect(served.url)
        for path in cases.values():
            request_s(client, path)  # warm up: templates compiled, the connection open
        for _ in range(args.runs):
            for label, path in cases.items():
                samples[label].append(request_s(client, path))
        client.close()
        latency = statistics.median(update_latency_s(cluster, served.url, args.runs))
        served.stop()  # before the store closes: its watch threads read the store
        cluster.close()
    static = statistics.median(samples["static file (dashboard.css)"])
    print(f"{'case':46} {'median ms':>10} {'x static':>9}")
    for label, taken in samples.items():
        median = statistics.median(taken)
        print(f"{label:46} {median * 1000:10.2f} {median / static:9.1f}")
    print(f"{'SSE update latency (write -> event)':46} {latency * 1000:10.2f} "
          f"{latency / static:9.1f}")


if __name__ == "__main__":
    main()
