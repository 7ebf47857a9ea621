"""Prometheus metrics of the Application controller, in the shape of Argo CD's:

* `headway_app_info{name, namespace, project, sync_status, health_status, operation}` = 1,
  like `argocd_app_info`;
* `headway_app_sync_failed_budget_exhausted{name, namespace}` = 1 while an automated sync
  has spent its retry budget on a failing revision (Headway's addition: the
  OutOfSync-but-Healthy state Argo CD leaves silent is an alert here);
* `headway_app_sync_retries_left{name, namespace}`: the automated-sync retries of a failing
  revision still allowed (the retry limit, 5 by default, less the retries done; +Inf for an
  unlimited policy), only for apps with automated sync, so an alert can fire before the budget
  is spent;
* `headway_app_last_reconcile_timestamp_seconds{name, namespace}`: when the controller last
  looked at the app (the clock's time), so "not reconciling" is an alert.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector, CollectorRegistry

__all__ = ["AppMetrics", "AppSample"]


@dataclass(frozen=True)
class AppSample:
    name: str
    namespace: str
    project: str
    sync_status: str
    health_status: str
    operation: str  # the phase of the last operation, "" when none
    budget_exhausted: bool
    observed_at: float = 0.0  # the controller clock's timestamp of this look
    retries_left: float | None = None  # None: no automated sync, so nothing retries


class AppMetrics(Collector):
    """Holds the latest sample per app; Prometheus reads them at scrape time."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self._samples: dict[tuple[str, str], AppSample] = {}
        self._lock = threading.Lock()
        self.registry = registry or CollectorRegistry()
        self.registry.register(self)

    def observe(self, sample: AppSample) -> None:
        with self._lock:
            self._samples[(sample.namespace, sample.name)] = sample

    def forget(self, namespace: str, name: str) -> None:
        with self._lock:
            self._samples.pop((namespace, name), None)

    def collect(self) -> Iterator[GaugeMetricFamily]:
        with self._lock:
            samples = list(self._samples.values())
        info = GaugeMetricFamily(
            "headway_app_info",
            "Information about an Application (always 1).",
            labels=["name", "namespace", "project", "sync_status", "health_status", "operation"],
        )
        exhausted = GaugeMetricFamily(
            "headway_app_sync_failed_budget_exhausted",
            "1 while automated sync has spent its retry budget on a failing revision.",
            labels=["name", "namespace"],
        )
        left = GaugeMetricFamily(
            "headway_app_sync_retries_left",
            "Automated-sync retries of a failing revision still allowed (+Inf: unlimited).",
            labels=["name", "namespace"],
        )
        looked = GaugeMetricFamily(
            "headway_app_last_reconcile_timestamp_seconds",
            "When the Application controller last reconciled the app (Unix time).",
            labels=["name", "namespace"],
        )
        for s in samples:
            labels = [s.name, s.namespace, s.project, s.sync_status, s.health_status, s.operation]
            info.add_metric(labels, 1.0)
            exhausted.add_metric([s.name, s.namespace], 1.0 if s.budget_exhausted else 0.0)
            looked.add_metric([s.name, s.namespace], s.observed_at)
            if s.retries_left is not None:
                left.add_metric([s.name, s.namespace], s.retries_left)
        yield info
        yield exhausted
        yield left
        yield looked
