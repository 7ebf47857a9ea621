"""Replays a fixture's exchanges to the Kubernetes backend through an httpx mock transport,
checking each request against the one the fixture expects."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2

from headway.cluster.kube import KubeCluster
from headway.cluster.kube.transport import DEFAULT_RETRY, RetryPolicy, Transport

FIXTURES = Path(__file__).parent / "fixtures"


def load(name: str) -> dict[str, Any]:
    fixture: dict[str, Any] = json.loads((FIXTURES / name).read_text())
    return fixture


@dataclass
class Replay:
    exchanges: list[dict[str, Any]]
    discovery: dict[str, Any]
    seen: list[httpx2.Request] = field(default_factory=list)

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        path = request.url.path
        if request.method == "GET" and path in self.discovery:
            return httpx2.Response(200, json=self.discovery[path])
        self.seen.append(request)
        assert self.exchanges, f"no exchange left for {request.method} {request.url}"
        exchange = self.exchanges.pop(0)
        self._check(request, exchange["request"])
        return _response(exchange["response"])

    @staticmethod
    def _check(request: httpx2.Request, expected: dict[str, Any]) -> None:
        assert (request.method, request.url.path) == (expected["method"], expected["path"])
        query = dict(request.url.params)
        for key, value in (expected.get("query") or {}).items():
            assert query.get(key) == value, f"{key}: expected {value!r}, sent {query.get(key)!r}"
        if "content_type" in expected:
            assert request.headers["Content-Type"] == expected["content_type"]


def _response(spec: dict[str, Any]) -> httpx2.Response:
    headers = {"Content-Type": "application/json", **(spec.get("headers") or {})}
    if "lines" in spec:
        content = "".join(json.dumps(line) + "\n" for line in spec["lines"]).encode()
    else:
        content = json.dumps(spec["body"]).encode()
    return httpx2.Response(spec["status"], headers=headers, content=content)


def replayed(name: str, *, sleeps: list[float] | None = None,
             retry: RetryPolicy = DEFAULT_RETRY) -> tuple[KubeCluster, Replay]:
    """A backend whose API server answers as fixture `name` says; `sleeps` collects the
    back-off waits instead of sleeping."""
    fixture = load(name)
    replay = Replay(exchanges=list(fixture["exchanges"]),
                    discovery=load("discovery.json")["documents"])
    client = httpx2.Client(transport=httpx2.MockTransport(replay.handle),
                           base_url="https://kube.example:6443")
    record = sleeps.append if sleeps is not None else (lambda _: None)
    return KubeCluster(Transport(client, retry=retry, sleep=record)), replay
