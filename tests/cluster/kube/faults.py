"""Faults injected in front of the local runtime's real Kubernetes API: requests a fixture's
`faults` match get the fixture's answer, every other request reaches the real server. So
the Kubernetes backend (and the controllers above it) meet a 403, 422 or 429 in the middle
of otherwise real traffic."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import httpx2

from cluster.kube.replay import _response, load
from headway.cluster.kube import KubeCluster
from headway.cluster.kube.transport import DEFAULT_RETRY, RetryPolicy, Transport


@dataclass
class Fault:
    method: str
    path: re.Pattern[str]
    response: dict[str, Any]
    times: int | None  # None: every matching request
    answered: int = 0


@dataclass
class FaultyApi:
    """An httpx transport: the fixture's faults first, then the real API at `base_url`."""

    base_url: str
    faults: list[Fault] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._real = httpx2.Client(base_url=self.base_url)
        self._clusters: list[KubeCluster] = []

    def inject(self, fixture: str, *, times: int | None = None) -> None:
        for fault in load(fixture)["faults"]:
            match = fault["match"]
            self.faults.append(Fault(match["method"], re.compile(match["path"]),
                                     fault["response"], times))

    def clear(self) -> None:
        self.faults.clear()

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        for fault in self.faults:
            spent = fault.times is not None and fault.answered >= fault.times
            if not spent and request.method == fault.method and fault.path.search(
                    request.url.path):
                fault.answered += 1
                return _response(fault.response)
        params = dict(request.url.params)
        if params.get("watch") == "true":  # answered whole: let the stream end soon, and
            params["timeoutSeconds"] = "1"  # the watcher reopen it from where it was
        forwarded = self._real.request(request.method, request.url.path,
                                       params=params, content=request.content,
                                       headers={k: v for k, v in request.headers.items()
                                                if k.lower() not in ("host", "content-length")})
        return httpx2.Response(forwarded.status_code, headers=forwarded.headers,
                               content=forwarded.content)

    def cluster(self, *, retry: RetryPolicy = DEFAULT_RETRY,
                sleeps: list[float] | None = None) -> KubeCluster:
        client = httpx2.Client(transport=httpx2.MockTransport(self.handle),
                               base_url=self.base_url)
        record = sleeps.append if sleeps is not None else (lambda _: None)
        cluster = KubeCluster(Transport(client, retry=retry, sleep=record))
        self._clusters.append(cluster)
        return cluster

    def close(self) -> None:
        for cluster in self._clusters:
            cluster.close()  # its watch streams first
        self._real.close()
