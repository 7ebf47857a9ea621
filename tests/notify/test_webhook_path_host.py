"""A webhook template's path is rendered from the object (its names and annotations come from
Git), so it must not move the call, with the service's headers and basic auth, to another
host: `send` refuses it and nothing reaches the other host."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import httpx2
import pytest

from headway.notifiers.send import DeliveryError, send
from headway.notify.config import Service
from headway.notify.decide import Notification
from headway.redaction import Redactor
from notification_receivers import Receiver, serve_receiver

TOKEN = "hook-token-must-stay-home-0123"


@pytest.fixture
def home() -> Iterator[Receiver]:
    yield from serve_receiver()


@pytest.fixture
def elsewhere() -> Iterator[Receiver]:
    yield from serve_receiver()


@pytest.fixture
async def http() -> AsyncIterator[httpx2.AsyncClient]:
    async with httpx2.AsyncClient() as client:
        yield client


def _notification(path: str) -> Notification:
    return Notification(
        key="k", trigger="on-sync-failed", template="t", service="receiver", recipient="",
        subject="Application argocd/shop", title="t", message="m", webhook_method="POST",
        webhook_path=path, webhook_body="{}",
    )


def _service(url: str) -> Service:
    settings = {"url": url, "headers": [{"name": "Authorization", "value": f"Bearer {TOKEN}"}]}
    return Service(name="receiver", kind="webhook", settings=settings)


async def test_a_path_that_names_another_host_is_not_sent(
    home: Receiver, elsewhere: Receiver, http: httpx2.AsyncClient
) -> None:
    other = elsewhere.url.removeprefix("http://")
    with pytest.raises(DeliveryError, match="would send the call to another host"):
        await send(
            _notification(f"@{other}/steal"), _service(home.url), http=http, redactor=Redactor()
        )
    assert elsewhere.requests == [] and home.requests == []


async def test_a_path_on_the_services_host_is_sent_with_its_headers(
    home: Receiver, http: httpx2.AsyncClient
) -> None:
    await send(_notification("/apps/shop"), _service(home.url), http=http, redactor=Redactor())
    [request] = home.requests
    assert request.path == "/apps/shop"
    assert request.headers["Authorization"] == f"Bearer {TOKEN}"
