"""The judge's Prometheus source: each revision's cumulative counters from instant queries.

    headway.dev/judge:
      canaryHash: "{{args.canary-hash}}"
      stableHash: "{{args.stable-hash}}"
      prometheus:
        address: http://prometheus:9090
        requests: sum(http_requests_total{rollouts_pod_template_hash="{{hash}}"})
        bad: sum(http_requests_total{rollouts_pod_template_hash="{{hash}}",code=~"5.."})

`{{hash}}` is replaced by each revision's hash, so one pair of queries reads both revisions.
The queries must give counters (totals), not rates: the judge takes the increase between two
readings itself. A query with no series counts as 0; an answer that is not one finite number
(summed over a vector's series) is a failed reading, which adds no evidence.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from headway.providers import http_edge

if TYPE_CHECKING:  # annotations only: the HTTP client loads with whoever makes a client
    import httpx2

__all__ = ["HASH_PLACEHOLDER", "PrometheusCounters", "prometheus_source", "read_prometheus"]

HASH_PLACEHOLDER = "{{hash}}"
_FIELDS = frozenset({"address", "requests", "bad", "timeout"})


@dataclass(frozen=True)
class PrometheusCounters:
    address: str
    requests: str
    bad: str
    timeout: float = 10.0


def prometheus_source(raw: Any, field: str) -> PrometheusCounters:
    """The `prometheus` block, or ValueError naming the field (`field` is its path)."""
    if not isinstance(raw, Mapping):
        raise ValueError(f"{field} must be a mapping")
    unknown = sorted(set(raw) - _FIELDS)
    if unknown:
        raise ValueError(f"{field}: unknown field(s) {', '.join(unknown)}")
    for name in ("address", "requests", "bad"):
        if not str(raw.get(name) or "").strip():
            raise ValueError(f"{field}.{name} is required")
    for name in ("requests", "bad"):
        if HASH_PLACEHOLDER not in str(raw[name]):
            raise ValueError(f"{field}.{name} must contain {HASH_PLACEHOLDER}")
    try:
        timeout = float(raw.get("timeout", 10))
    except (TypeError, ValueError):
        raise ValueError(f"{field}.timeout must be a number of seconds") from None
    return PrometheusCounters(
        str(raw["address"]).rstrip("/"), str(raw["requests"]), str(raw["bad"]), timeout
    )


def _total(body: Any) -> float:
    """One number from an instant query's answer: a scalar, or a vector's series summed."""
    if body.get("status") != "success":
        raise ValueError(f"Prometheus answered {body.get('error') or body!r}")
    data = body["data"]
    if data.get("resultType") == "scalar":
        values = [float(data["result"][1])]
    elif data.get("resultType") == "vector":
        values = [float(series["value"][1]) for series in data.get("result") or []]
    else:
        raise ValueError(f"result type {data.get('resultType')!r} is not a scalar or vector")
    total = sum(values)
    if not math.isfinite(total):
        raise ValueError(f"the answer {total} is not a finite count")
    return total


async def _query(client: httpx2.AsyncClient, source: PrometheusCounters, query: str) -> float | str:
    url = f"{source.address}/api/v1/query"
    answer = await http_edge.send(
        client, "GET", url, params={"query": query}, timeout_seconds=source.timeout
    )
    if isinstance(answer, http_edge.Failure):
        return f"Prometheus at {source.address}: {answer.reason}"
    try:
        return _total(answer.json())
    except (ValueError, KeyError, TypeError, AttributeError, IndexError) as error:
        return f"Prometheus at {source.address}, query {query!r}: {error}"


async def read_prometheus(
    client: httpx2.AsyncClient, source: PrometheusCounters, *, canary: str, stable: str
) -> tuple[float, float, float, float] | str:
    """(canary requests, canary bad, stable requests, stable bad), or why not."""
    found: list[float] = []
    for pod_hash in (canary, stable):
        for template in (source.requests, source.bad):
            value = await _query(client, source, template.replace(HASH_PLACEHOLDER, pod_hash))
            if isinstance(value, str):
                return value
            found.append(value)
    cr, cb, sr, sb = found
    return cr, cb, sr, sb
