"""`send(notification, service)`: one try, raising `DeliveryError` when it did not arrive."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlsplit

import apprise
import httpx2

from headway.notify.config import Service
from headway.notify.decide import Notification
from headway.redaction import Redactor

__all__ = ["DeliveryError", "send"]

SLACK_API = "https://slack.com/api"
TIMEOUT_SECONDS = 10.0
_EMAIL_MODES = {"none": "insecure", "starttls": "starttls", "ssl": "ssl"}


class DeliveryError(RuntimeError):
    """A notification that did not reach its service; the message is redacted."""


async def send(
    notification: Notification, service: Service, *, http: httpx2.AsyncClient, redactor: Redactor
) -> None:
    try:
        if service.kind == "webhook":
            await _webhook(notification, service.settings, http)
        elif service.kind == "slack":
            await _slack(notification, service.settings, http)
        elif service.kind == "grafana":
            await _grafana(notification, service.settings, http)
        elif service.kind == "email":
            await asyncio.to_thread(_apprise, notification, [_email_url(notification, service)])
        else:
            urls = [str(u) for u in service.settings.get("urls") or []]
            await asyncio.to_thread(_apprise, notification, urls)
    except DeliveryError as err:
        raise DeliveryError(redactor.text(str(err))) from None
    except (httpx2.HTTPError, OSError, ValueError) as err:
        raise DeliveryError(redactor.text(f"{type(err).__name__}: {err}")) from None


def default_webhook_body(notification: Notification) -> str:
    """Headway's JSON body for a webhook whose template has no `webhook.<service>` part."""
    return json.dumps({
        "trigger": notification.trigger,
        "template": notification.template,
        "subject": notification.subject,
        "recipient": notification.recipient,
        "title": notification.title,
        "message": notification.message,
    })


async def _webhook(n: Notification, settings: Mapping[str, Any], http: httpx2.AsyncClient) -> None:
    base = str(settings["url"])
    url = base.rstrip("/") + n.webhook_path if n.webhook_path else base
    if not _same_origin(base, url):
        # The path is rendered from the object (annotations, names come from Git): it must
        # not move the call, with its headers and basic auth, to another host.
        raise DeliveryError(
            f"webhook {n.service}: the template's path {n.webhook_path!r} would send the call "
            "to another host than the service's url; not sent"
        )
    headers = {str(h.get("name")): str(h.get("value")) for h in settings.get("headers") or []}
    body = n.webhook_body if n.webhook_body is not None else default_webhook_body(n)
    if n.webhook_body is None:
        headers.setdefault("Content-Type", "application/json")
    auth_spec = settings.get("basicAuth") or {}
    auth = (str(auth_spec["username"]), str(auth_spec["password"])) if auth_spec else None
    method = n.webhook_method or "POST"
    try:
        response = await http.request(
            method, url, content=body.encode(), headers=headers, auth=auth,
            timeout=TIMEOUT_SECONDS,
        )
    except httpx2.HTTPError as err:
        raise DeliveryError(f"webhook {method} {url}: {type(err).__name__}: {err}") from None
    if response.status_code >= 400:
        raise DeliveryError(f"webhook {url} answered {response.status_code}")


async def _slack(n: Notification, settings: Mapping[str, Any], http: httpx2.AsyncClient) -> None:
    api = str(settings.get("apiURL") or SLACK_API).rstrip("/")
    payload: dict[str, Any] = {"channel": n.recipient, "text": n.message}
    for field, text in (("attachments", n.slack_attachments), ("blocks", n.slack_blocks)):
        if text.strip():
            payload[field] = json.loads(text)
    if settings.get("username"):
        payload["username"] = str(settings["username"])
    icon = str(settings.get("icon") or "")
    if icon:
        payload["icon_emoji" if icon.startswith(":") else "icon_url"] = icon
    response = await http.post(
        f"{api}/chat.postMessage", json=payload, timeout=TIMEOUT_SECONDS,
        headers={"Authorization": f"Bearer {settings.get('token', '')}"},
    )
    answer = response.json() if response.status_code < 400 else {}
    if response.status_code >= 400 or not answer.get("ok"):
        detail = answer.get("error") or response.status_code
        raise DeliveryError(f"slack {api}/chat.postMessage to {n.recipient!r}: {detail}")


def grafana_annotation(n: Notification, settings: Mapping[str, Any]) -> dict[str, Any]:
    """The body of Grafana's `POST /api/annotations`: an organization annotation with the
    recipient's `|`-separated tags (Argo CD's grafana service), on one dashboard when the
    service names its `dashboardUID`. No `time`: Grafana stamps it when the annotation arrives."""
    body: dict[str, Any] = {
        "isRegion": False,
        "tags": [tag.strip() for tag in n.recipient.split("|") if tag.strip()],
        "text": n.message or n.title,
    }
    if settings.get("dashboardUID"):
        body["dashboardUID"] = str(settings["dashboardUID"])
    return body


async def _grafana(n: Notification, settings: Mapping[str, Any], http: httpx2.AsyncClient) -> None:
    url = str(settings["apiUrl"]).rstrip("/") + "/annotations"
    headers = {"Authorization": f"Bearer {settings['apiKey']}"} if settings.get("apiKey") else {}
    response = await http.post(
        url, json=grafana_annotation(n, settings), headers=headers, timeout=TIMEOUT_SECONDS
    )
    if response.status_code >= 400:
        try:
            answer = response.json()
        except ValueError:
            answer = {}
        detail = str(answer.get("message") or "") if isinstance(answer, dict) else ""
        raise DeliveryError(f"grafana {url} answered {response.status_code} {detail}".rstrip())


def _same_origin(first: str, second: str) -> bool:
    """Whether two URLs reach the same scheme, host and port (a user part does not count)."""
    try:
        a, b = urlsplit(first), urlsplit(second)
        return (a.scheme, a.hostname, a.port) == (b.scheme, b.hostname, b.port)
    except ValueError:
        return False


def _email_url(n: Notification, service: Service) -> str:
    s = service.settings
    user = quote(str(s.get("username") or ""), safe="")
    password = quote(str(s.get("password") or ""), safe="")
    auth = f"{user}:{password}@" if user else ""
    mode = _EMAIL_MODES.get(str(s.get("tls") or "starttls"), "starttls")
    to = quote(n.recipient, safe="@")
    sender = quote(str(s.get("from") or ""), safe="@")
    return (
        f"mailtos://{auth}{s.get('host')}:{int(s.get('port') or 587)}/{to}"
        f"?from={sender}&mode={mode}&format={'html' if s.get('html') else 'text'}"
    )


def _apprise(n: Notification, urls: list[str]) -> None:
    notifier = apprise.Apprise()
    for url in urls:
        if not notifier.add(url):
            raise DeliveryError(f"not an Apprise URL the installed Apprise knows: {url}")
    logs = apprise.LogCapture(level=apprise.logging.WARNING)  # type: ignore[no-untyped-call]
    with logs as captured:
        sent = notifier.notify(title=n.email_subject or n.title, body=n.message or n.title)
    if not sent:
        detail = captured.getvalue().strip().splitlines()[-1:] if captured else []
        raise DeliveryError(f"{n.service}: not delivered ({'; '.join(detail) or 'no detail'})")
