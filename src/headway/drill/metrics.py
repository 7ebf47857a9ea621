"""How the drill measures: a template's metric read from the simulated traffic, and the judge.

A metric's outcome goes through the controller's own code: `headway_outcome` (conditions,
Headway's empty and non-finite rules) for a template metric, `judge_phase` for the judge.
What the drill cannot simulate it refuses by name: it reads `headway.dev/traffic` metrics, and
Prometheus queries that compute an error ratio (a 5xx selector divided by all requests), a
success ratio (the same with the 5xx selector negated, `code!~"5.*"`, as Argo Rollouts' own
examples write it) or a `histogram_quantile`; a query naming `{{args.…}}` is taken to select
the canary's pod-template-hash, any other to read the whole service (both revisions).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING

from headway.analysis.measurement import MeasurementPhase, MetricConditions
from headway.analysis.sequential import SequentialState
from headway.analysis.verdict import headway_outcome
from headway.model.analysis import Metric
from headway.model.durations import DurationError, parse_duration
from headway.providers.judge import JudgeConfig, SavedEvidence, bad_count, judge_phase, next_look
from headway.providers.traffic import PLUGIN_NAME
from headway.providers.traffic_window import Counters, quantile

if TYPE_CHECKING:  # the simulated traffic (numpy) loads with the replay, not with the planner
    from headway.drill.traffic import Tape

__all__ = ["DrillError", "JudgeReading", "Reading", "reading_of"]

_RANGE = re.compile(r"\[(\d+(?:\.\d+)?(?:ms|s|m|h))\]")
_QUANTILE = re.compile(r"histogram_quantile\(\s*([0-9.]+)")
_FIVE_XX = re.compile(r"5\.\.|5xx|\"5")
# The first label matcher on a 5xx class (`"5..`, `"5xx"`, `"5.*"`, `"[4-5].*"`, `"[45]..`):
# `!~` or `!=` counts the requests that did not fail, so the ratio is a success ratio.
_FIVE_XX_MATCHER = re.compile(r"""(!~|=~|!=|=)\s*["'`](?:5|\[4-5\]|\[45\])""")


class DrillError(ValueError):
    """A rollout or template the drill cannot replay, and why."""


@dataclass(frozen=True)
class Reading:
    """What one template metric measures, in terms the simulation can answer."""

    kind: str  # error-ratio | success-ratio | latency | requests | request-rate
    window: float  # seconds
    canary_only: bool
    described: str
    quantile: float = 0.99
    empty_is_nan: bool = False  # Prometheus answers 0/0 with NaN; the traffic provider with []

    def result(self, tape: Tape, second: int) -> list[float]:
        if tape.scenario.empty_query:
            return []
        delta = tape.window(second, self.window, canary_only=self.canary_only)
        if self.kind == "requests":
            return [delta.requests]
        if self.kind == "request-rate":
            return [delta.requests / self.window]
        if delta.requests <= 0:
            return [math.nan] if self.empty_is_nan else []
        if self.kind == "error-ratio":
            return [delta.errors / delta.requests]
        if self.kind == "success-ratio":
            return [(delta.requests - delta.errors) / delta.requests]
        found = quantile(self.quantile, delta.buckets)
        return [] if found is None else [found]

    def outcome(
        self, metric: Metric, conditions: MetricConditions, tape: Tape, second: int
    ) -> MeasurementPhase:
        if tape.scenario.dead_backend:
            return MeasurementPhase.INCONCLUSIVE  # Headway's rule for an unreachable backend
        result = self.result(tape, second)
        return headway_outcome(
            conditions,
            result,
            on_empty=metric.on_empty,
            query=self.described,
            on_non_finite=metric.on_non_finite,
        ).phase


def _window(text: str, metric: str) -> float:
    try:
        return parse_duration(text, bare_seconds=False)
    except DurationError as error:
        raise DrillError(f'metric "{metric}": {error}') from None


def _traffic_reading(metric: Metric) -> Reading:
    config = (metric.provider.plugin or {}).get(PLUGIN_NAME) or {}
    kind = str(config.get("metric", ""))
    if kind == "latency-p99":
        kind = "latency"
    window = _window(str(config.get("window") or "1m"), metric.name)
    canary_only = bool(config.get("podTemplateHash"))
    scope = "the canary" if canary_only else "all traffic"
    return Reading(kind, window, canary_only, f"{kind} of {scope} over {window:g}s")


def _prometheus_reading(metric: Metric) -> Reading:
    query = (metric.provider.prometheus.query if metric.provider.prometheus else None) or ""
    ranged = _RANGE.search(query)
    if ranged is None:
        raise DrillError(f'metric "{metric.name}": the drill needs a range like [2m] in the query')
    window = _window(ranged.group(1), metric.name)
    canary_only = "{{args." in query
    scope = "the canary" if canary_only else "all traffic of the service"
    quantiled = _QUANTILE.search(query)
    if quantiled is not None:
        q = float(quantiled.group(1))
        described = f"p{q * 100:g} latency of {scope} over {window:g}s"
        return Reading("latency", window, canary_only, described, quantile=q, empty_is_nan=True)
    matcher = _FIVE_XX_MATCHER.search(query)
    if (matcher is not None or _FIVE_XX.search(query)) and "/" in query:
        kind = (
            "success-ratio" if matcher is not None and matcher.group(1)[0] == "!" else "error-ratio"
        )
        described = f"{kind.replace('-', ' ')} of {scope} over {window:g}s"
        return Reading(kind, window, canary_only, described, empty_is_nan=True)
    raise DrillError(
        f'metric "{metric.name}": the drill cannot simulate this query (it reads error '
        "and success ratios, a 5xx selector over all requests, and histogram_quantile "
        "latencies)"
    )


def reading_of(metric: Metric) -> Reading:
    """How the drill answers `metric`, or `DrillError` saying why it cannot."""
    kind = metric.provider.kind
    if kind == "prometheus":
        return _prometheus_reading(metric)
    if kind == "plugin" and PLUGIN_NAME in (metric.provider.plugin or {}):
        return _traffic_reading(metric)
    raise DrillError(
        f'metric "{metric.name}": the drill simulates prometheus, {PLUGIN_NAME} and '
        f"headway.dev/judge metrics, not {kind or 'this provider'}"
    )


@dataclass
class JudgeReading:
    """The judge's one in-flight measurement: the evidence so far, look by look."""

    config: JudgeConfig
    saved: SavedEvidence = field(default_factory=lambda: SavedEvidence(SequentialState(), None))

    def look(self, tape: Tape, *, second: int, elapsed: float) -> MeasurementPhase | None:
        if not tape.scenario.dead_backend:
            latency = self.config.slower_than is not None
            canary = (
                Counters()
                if tape.scenario.empty_query
                else tape.canary.counters(second, latency=latency)
            )
            stable = tape.stable.counters(second, latency=latency)
            slower = self.config.slower_than
            counts = (
                canary.requests,
                bad_count(canary, slower),
                stable.requests,
                bad_count(stable, slower),
            )
            self.saved = next_look(self.config, self.saved, counts)
        return judge_phase(self.config, self.saved.state, elapsed=timedelta(seconds=elapsed))
