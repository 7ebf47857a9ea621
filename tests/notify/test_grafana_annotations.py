"""The `grafana` notification service (Argo CD's: `service.grafana` with `apiUrl` and `apiKey`,
the recipient's `|`-separated tags) replayed against Grafana's answers from fixtures; each
fixture says where it came from (`provenance`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import pytest

from headway.notifiers import DeliveryError, send
from headway.notify.config import Service
from headway.notify.decide import Notification
from headway.redaction import Redactor

FIXTURES = Path(__file__).parent / "fixtures" / "grafana"
KEY = "glsa_planted-key-5ec2e7"
NOTE = Notification(key="k", trigger="on-sync-succeeded", template="app-sync-succeeded",
                    service="grafana", recipient="deploy|headway| web", subject="Application",
                    title="sync", message="Sync of web succeeded")


def fixture(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((FIXTURES / name).read_text())
    assert loaded["provenance"].startswith(("unverified:", "recorded:")), name
    return loaded


def replaying(name: str, seen: list[httpx2.Request]) -> httpx2.AsyncClient:
    answer = fixture(name)

    def handle(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        assert (request.method, request.url.path) == (
            answer["request"]["method"], answer["request"]["path"])
        return httpx2.Response(answer["status"], json=answer["body"])

    return httpx2.AsyncClient(transport=httpx2.MockTransport(handle))


def grafana(**settings: str) -> Service:
    return Service(name="grafana", kind="grafana",
                   settings={"apiUrl": "https://grafana.example/api", "apiKey": KEY, **settings})


async def test_an_annotation_is_posted_with_the_tags_the_key_and_the_dashboard() -> None:
    seen: list[httpx2.Request] = []
    async with replaying("annotation-created.json", seen) as http:
        await send(NOTE, grafana(dashboardUID="headway"), http=http, redactor=Redactor())
    assert seen[0].headers["Authorization"] == f"Bearer {KEY}"
    assert json.loads(seen[0].content) == {
        "isRegion": False, "tags": ["deploy", "headway", "web"],
        "text": "Sync of web succeeded", "dashboardUID": "headway"}


async def test_an_annotation_without_a_dashboard_is_for_the_whole_organization() -> None:
    seen: list[httpx2.Request] = []
    async with replaying("annotation-created.json", seen) as http:
        await send(NOTE, grafana(), http=http, redactor=Redactor())
    assert "dashboardUID" not in json.loads(seen[0].content)


async def test_a_refused_key_is_a_delivery_error_with_grafanas_reason_and_no_key() -> None:
    seen: list[httpx2.Request] = []
    async with replaying("invalid-api-key.json", seen) as http:
        with pytest.raises(DeliveryError) as failed:
            await send(NOTE, grafana(), http=http, redactor=Redactor.of([KEY]))
    assert "401 Invalid API key" in str(failed.value)
    assert KEY not in str(failed.value)
