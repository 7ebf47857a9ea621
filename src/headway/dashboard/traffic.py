"""What traffic the canary really got: request counts by pod-template hash, read from the
router's own metrics (the local mesh's `headway_requests_total`, on the address the local
runtime records in `runtime.json`), over the time since the page last looked.

Where no router metrics can be read (a Kubernetes cluster, no runtime running), the page says
nothing here and shows only the weights the controller set and verified.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import httpx2
from prometheus_client.parser import text_string_to_metric_families

from headway.state_dir import RuntimePaths, read_runtime_info

__all__ = ["TrafficObserver", "counts_by_hash", "share_line"]

_FETCH_SECONDS = 1.0
_ENOUGH = 20  # requests between two looks worth a share; fewer: the share since the start


def counts_by_hash(metrics_text: str) -> dict[str, int]:
    """Requests routed to each pod-template hash so far. Purely computational."""
    counts: dict[str, float] = {}
    for family in text_string_to_metric_families(metrics_text):
        if family.name != "headway_requests":
            continue
        for sample in family.samples:
            pod_hash = sample.labels.get("rollouts_pod_template_hash")
            if sample.name.endswith("_total") and pod_hash:
                counts[pod_hash] = counts.get(pod_hash, 0.0) + sample.value
    return {h: int(n) for h, n in counts.items()}


def share_line(
    counts: Mapping[str, int], *, canary: str, stable: str, window_s: float | None
) -> str:
    """`router: canary 26% of 780 requests (stable 74%) in the last 30 s`; "" without any.
    Purely computational."""
    to_canary, to_stable = counts.get(canary, 0), counts.get(stable, 0)
    total = to_stable if canary == stable else to_canary + to_stable
    if total <= 0:
        return ""
    when = f"in the last {window_s:.0f} s" if window_s is not None else "since the router started"
    if canary == stable:
        return f"router: every one of {total} requests to {stable} {when}"
    return (f"router: canary {100 * to_canary / total:.0f}% of {total} requests "
            f"(stable {100 * to_stable / total:.0f}%) {when}")


@dataclass
class TrafficObserver:
    """Reads the router's counters; remembers the last reading per Rollout, so each line is
    about the traffic between two looks."""

    state_dir: Path
    _last: dict[str, tuple[float, dict[str, int]]] = field(default_factory=dict)

    def _address(self) -> str:
        return str(read_runtime_info(RuntimePaths(self.state_dir)).get("metricsAddress") or "")

    async def line(self, key: str, *, canary: str, stable: str, now: float) -> str:
        address = self._address()
        if not address or not canary or not stable:
            return ""
        try:
            async with httpx2.AsyncClient(timeout=_FETCH_SECONDS) as client:
                answer = await client.get(f"http://{address}/metrics")
            counts = counts_by_hash(answer.text) if answer.status_code == 200 else {}
        except (httpx2.HTTPError, ValueError):
            return ""
        previous = self._last.get(key)
        if previous is not None and now > previous[0]:
            delta = {h: n - previous[1].get(h, 0) for h, n in counts.items()}
            if delta.get(canary, 0) + delta.get(stable, 0) >= _ENOUGH:
                self._last[key] = (now, counts)
                return share_line(delta, canary=canary, stable=stable,
                                  window_s=now - previous[0])
        else:
            self._last[key] = (now, counts)
        return share_line(counts, canary=canary, stable=stable, window_s=None)
