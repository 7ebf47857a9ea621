"""A metric's limits and schedule, as plain numbers and durations. Pure.

`MetricPolicy` carries Argo Rollouts' fields with Argo's defaults: failureLimit 0,
inconclusiveLimit 0, consecutiveErrorLimit 4, consecutiveSuccessLimit 0 (off), and a count that
is 1 when neither count nor interval is set and unbounded when only an interval is. `SafetyRules`
switches Headway's deliberate differences (docs/compatibility.md); `ARGO_RULES` turns them off.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import re2  # type: ignore[import-untyped]

from headway.model.analysis import Metric
from headway.model.durations import DurationError, parse_duration

__all__ = [
    "ARGO_RULES",
    "DEFAULT_CONSECUTIVE_ERROR_LIMIT",
    "DEFAULT_MEASUREMENT_LIMIT",
    "ERROR_RETRY_INTERVAL",
    "HEADWAY_RULES",
    "MetricPolicy",
    "PolicyError",
    "SafetyRules",
    "metric_policies",
]

DEFAULT_CONSECUTIVE_ERROR_LIMIT = 4
DEFAULT_MEASUREMENT_LIMIT = 10
"""Measurements kept per metric unless a measurementRetention rule says otherwise."""
ERROR_RETRY_INTERVAL = timedelta(seconds=10)
"""After an Error, the next measurement comes this soon, whatever the interval."""


class PolicyError(ValueError):
    """A metric whose limits cannot be read (an unresolved `{{args.x}}`, a bad duration)."""


@dataclass(frozen=True)
class SafetyRules:
    """Headway's safety differences from Argo Rollouts, each on by default."""

    require_measurements: bool = True
    """A metric succeeds only after `count` (or, unbounded, 1) measurements that were not
    Errors; Argo also calls a run Successful when it is terminated before measuring."""
    errors_never_succeed: bool = True
    """A metric, or a run, whose measurements were all Errors is an Error, never Successful."""


HEADWAY_RULES = SafetyRules()
ARGO_RULES = SafetyRules(require_measurements=False, errors_never_succeed=False)


@dataclass(frozen=True)
class MetricPolicy:
    name: str
    count: int = 0
    interval: timedelta | None = None
    initial_delay: timedelta | None = None
    failure_limit: int = 0
    inconclusive_limit: int = 0
    consecutive_error_limit: int = DEFAULT_CONSECUTIVE_ERROR_LIMIT
    consecutive_success_limit: int = 0
    dry_run: bool = False
    measurement_limit: int = DEFAULT_MEASUREMENT_LIMIT

    def effective_count(self) -> int | None:
        """How many measurements to take; None means until the run is terminated."""
        if self.count:
            return self.count
        return 1 if self.interval is None else None

    def required_measurements(self) -> int:
        """The fewest non-Error measurements a Successful metric needs (Headway's rule)."""
        return self.effective_count() or 1


def _int(metric: str, field: str, value: int | str | None, default: int) -> int:
    if value is None or value == "":
        return default
    try:
        return int(value)
    except ValueError:
        raise PolicyError(f"metric {metric!r}: {field} {value!r} is not a number") from None


def _duration(metric: str, field: str, value: str | None) -> timedelta | None:
    if not value:
        return None
    try:
        return timedelta(seconds=parse_duration(value, bare_seconds=False))
    except DurationError as err:
        raise PolicyError(f"metric {metric!r}: {field}: {err}") from None


def _matching(
    kind: str, rules: Sequence[Mapping[str, Any]], names: Sequence[str]
) -> dict[str, Mapping[str, Any]]:
    """Rule per metric name; each rule's metricName is an unanchored regular expression."""
    matched: dict[str, Mapping[str, Any]] = {}
    for index, rule in enumerate(rules):
        pattern = str(rule.get("metricName", ""))
        try:
            regex = re2.compile(pattern)
        except re2.error:
            raise PolicyError(f"{kind}[{index}]: invalid metricName {pattern!r}") from None
        hits = [name for name in names if regex.search(name)]
        if not hits:
            raise PolicyError(f"{kind}[{index}]: rule {pattern!r} matches no metric name")
        matched.update(dict.fromkeys(hits, rule))
    return matched


def metric_policies(
    metrics: Sequence[Metric],
    *,
    dry_run: Sequence[Mapping[str, Any]] = (),
    measurement_retention: Sequence[Mapping[str, Any]] = (),
) -> list[MetricPolicy]:
    """Policies for a run's metrics, with its dryRun and measurementRetention rules applied."""
    names = [metric.name for metric in metrics]
    dry = _matching("dryRun", dry_run, names)
    retained = _matching("measurementRetention", measurement_retention, names)
    policies = []
    for metric in metrics:
        limit = _int(metric.name, "limit", retained.get(metric.name, {}).get("limit"), 0)
        policies.append(
            MetricPolicy(
                name=metric.name,
                count=_int(metric.name, "count", metric.count, 0),
                interval=_duration(metric.name, "interval", metric.interval),
                initial_delay=_duration(metric.name, "initialDelay", metric.initial_delay),
                failure_limit=_int(metric.name, "failureLimit", metric.failure_limit, 0),
                inconclusive_limit=_int(
                    metric.name, "inconclusiveLimit", metric.inconclusive_limit, 0
                ),
                consecutive_error_limit=_int(
                    metric.name,
                    "consecutiveErrorLimit",
                    metric.consecutive_error_limit,
                    DEFAULT_CONSECUTIVE_ERROR_LIMIT,
                ),
                consecutive_success_limit=_int(
                    metric.name, "consecutiveSuccessLimit", metric.consecutive_success_limit, 0
                ),
                dry_run=metric.name in dry,
                measurement_limit=limit if limit > 0 else DEFAULT_MEASUREMENT_LIMIT,
            )
        )
    return policies
