"""HTTP at the providers' edge: one request, every httpx2 error translated into a reason.

A provider asks `send()` and gets either a response or a `Failure` saying whether the
backend was *unreachable* (connection refused, DNS, timeout, 502/503/504: no evidence, so
Inconclusive) or answered something unusable (any other non-2xx status: the query or the
URL is wrong, so Error). Nothing here raises.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # `send` imports it: a caller with a client has loaded it already
    import httpx2

__all__ = ["Failure", "send"]

UNAVAILABLE_STATUSES = frozenset({502, 503, 504})
_BODY_SHOWN = 300


@dataclass(frozen=True)
class Failure:
    unreachable: bool
    reason: str


def _describe(error: httpx2.HTTPError) -> str:
    text = str(error) or type(error).__name__
    return f"{type(error).__name__}: {text}"


async def send(
    client: httpx2.AsyncClient,
    method: str,
    url: str,
    *,
    timeout_seconds: float,
    headers: Mapping[str, str] | None = None,
    params: Mapping[str, str] | None = None,
    content: bytes | None = None,
) -> httpx2.Response | Failure:
    """One request; a 2xx response, or why there is none."""
    import httpx2

    try:
        response = await client.request(
            method,
            url,
            headers=dict(headers or {}),
            params=dict(params or {}),
            content=content,
            timeout=timeout_seconds,
        )
    except httpx2.UnsupportedProtocol as error:
        return Failure(False, f"bad URL {url!r}: {error}")
    except httpx2.TimeoutException as error:
        return Failure(True, f"no answer within {timeout_seconds:g}s ({_describe(error)})")
    except httpx2.TransportError as error:
        return Failure(True, _describe(error))
    except (httpx2.HTTPError, httpx2.InvalidURL) as error:
        return Failure(False, f"bad request to {url}: {error}")
    if 200 <= response.status_code < 300:
        return response
    body = response.text[:_BODY_SHOWN].strip()
    reason = f"HTTP {response.status_code}" + (f": {body}" if body else "")
    return Failure(response.status_code in UNAVAILABLE_STATUSES, reason)
