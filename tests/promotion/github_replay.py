"""Replays a GitHub API scenario from tests/promotion/github/*.json through httpx2's mock
transport: each request must be the next one the scenario expects (method, path, the query
parameters and JSON body it lists), and gets that exchange's response. Each file's `source`
says where its responses came from."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2

SCENARIOS = Path(__file__).parent / "github"


class Replay:
    def __init__(self, name: str) -> None:
        loaded = json.loads((SCENARIOS / name).read_text())
        assert loaded["source"], "every fixture says where it came from"
        self.exchanges: list[dict[str, Any]] = loaded["exchanges"]
        self.position = 0
        self.requests: list[httpx2.Request] = []

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        assert self.position < len(self.exchanges), f"unexpected request {request.url}"
        expected = self.exchanges[self.position]["request"]
        response = self.exchanges[self.position]["response"]
        self.position += 1
        self.requests.append(request)
        assert request.method == expected["method"]
        assert request.url.path == expected["path"]
        for key, value in expected.get("query", {}).items():
            assert request.url.params.get(key) == value, (key, request.url.params)
        if "json" in expected:
            assert json.loads(request.content) == expected["json"]
        body = response["body"]
        content = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        return httpx2.Response(response["status"], headers=response["headers"], content=content)

    def client(self) -> httpx2.Client:
        return httpx2.Client(transport=httpx2.MockTransport(self.handle))

    @property
    def done(self) -> bool:
        return self.position == len(self.exchanges)
