"""HTTP to one API server: JSON requests, Status errors translated, 429 retried.

The connection (server address, TLS, bearer token, exec plugins, in-cluster service
account) comes from lightkube's configuration loader (`connection.py`); this module only
sends requests and reads answers. A `429 Too Many Requests` (API priority and fairness) is
retried after the `Retry-After` the server names, at most `RetryPolicy.attempts` times in
all, each wait capped; then `Throttled`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx2

from headway.cluster import errors
from headway.cluster.kube import statuses

__all__ = ["DEFAULT_RETRY", "RetryPolicy", "Transport"]

Params = Mapping[str, str | int | bool]


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 5  # requests in all, the first included
    default_wait: float = 1.0  # when a 429 names no Retry-After
    max_wait: float = 10.0  # a longer Retry-After is cut to this


DEFAULT_RETRY = RetryPolicy()


def _query(params: Params | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in (params or {}).items():
        out[key] = ("true" if value else "false") if isinstance(value, bool) else str(value)
    return out


class Transport:
    def __init__(self, client: httpx2.Client, *, retry: RetryPolicy = DEFAULT_RETRY,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.client = client
        self.retry = retry
        self._sleep = sleep

    def close(self) -> None:
        self.client.close()

    def request(self, method: str, path: str, *, what: str, params: Params | None = None,
                body: Any = None, content_type: str = "application/json") -> Any:
        """The decoded JSON answer, or the `ClusterError` the Status says."""
        content = None if body is None else json.dumps(body).encode()
        headers = {"Accept": "application/json"}
        if content is not None:
            headers["Content-Type"] = content_type
        for attempt in range(1, self.retry.attempts + 1):
            response = self._send(method, path, _query(params), content, headers, what=what)
            if response.status_code != 429 or attempt == self.retry.attempts:
                break
            self._sleep(min(self.retry.max_wait, statuses.retry_after_seconds(
                response.headers.get("Retry-After"), default=self.retry.default_wait)))
        if response.status_code >= 400:
            status = statuses.parse_status(response.content)
            raise statuses.error_for(response.status_code, status, what=what)
        return response.json()

    def request_text(self, method: str, path: str, *, what: str,
                     params: Params | None = None) -> str:
        """A plain-text answer (a Pod's log)."""
        response = self._send(method, path, _query(params), None, {"Accept": "*/*"}, what=what)
        if response.status_code >= 400:
            status = statuses.parse_status(response.content)
            raise statuses.error_for(response.status_code, status, what=what)
        return response.text

    def _send(self, method: str, path: str, params: dict[str, str], content: bytes | None,
              headers: dict[str, str], *, what: str) -> httpx2.Response:
        try:
            return self.client.request(method, path, params=params, content=content,
                                       headers=headers)
        except httpx2.HTTPError as error:
            raise errors.ClusterError(f"{what}: cannot reach the API server: {error}") from error

    @contextmanager
    def stream_lines(self, path: str, *, what: str, params: Params,
                     read_timeout: float | None) -> Iterator[Iterator[bytes]]:
        """The lines of a streamed GET (a watch); each line must arrive within
        `read_timeout` seconds (None: wait as long as the server keeps the stream open)."""
        timeout = httpx2.Timeout(10.0, read=read_timeout)
        try:
            with self.client.stream("GET", path, params=_query(params), timeout=timeout,
                                    headers={"Accept": "application/json"}) as response:
                if response.status_code >= 400:
                    response.read()
                    status = statuses.parse_status(response.content)
                    raise statuses.error_for(response.status_code, status, what=what)
                yield _lines(response)
        except httpx2.TransportError as error:
            if isinstance(error, httpx2.ReadTimeout):
                return
            raise errors.ClusterError(f"{what}: the watch stream broke: {error}") from error


def _lines(response: httpx2.Response) -> Iterator[bytes]:
    for line in response.iter_lines():
        if line:
            yield line.encode() if isinstance(line, str) else line
