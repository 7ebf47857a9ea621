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
  looked at the app (the clock's time), so "not reconciling" is an alert;
* `argocd_app_sync_total{name, namespace, project, dest_server, phase, dry_run}`: sync
  operations seen to finish, as Argo CD counts them. An operation counts once, when the
  controller sees it end (a new `startedAt` in a final phase); one that had already ended
  before this process first looked at the app is not counted again after a restart.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
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
    operation_started: str = ""  # the last operation's `startedAt`: tells one from the next
    dest_server: str = ""


_FINAL_PHASES = frozenset({"Succeeded", "Failed", "Error"})
_SYNC_LABELS = ["name", "namespace", "project", "dest_server", "phase", "dry_run"]


class AppMetrics(Collector):
    """Holds the latest sample per app; Prometheus reads them at scrape time."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self._samples: dict[tuple[str, str], AppSample] = {}
        self._syncs: dict[tuple[str, ...], int] = {}  # argocd_app_sync_total by its labels
        self._lock = threading.Lock()
        self.registry = registry or CollectorRegistry()
        self.registry.register(self)

    def observe(self, sample: AppSample) -> None:
        with self._lock:
            before = self._samples.get((sample.namespace, sample.name))
            self._samples[(sample.namespace, sample.name)] = sample
            if before is not None and _sync_finished(before, sample):
                key = (sample.name, sample.namespace, sample.project, sample.dest_server,
                       sample.operation, "false")
                self._syncs[key] = self._syncs.get(key, 0) + 1

    def forget(self, namespace: str, name: str) -> None:
        with self._lock:
            self._samples.pop((namespace, name), None)

    def collect(self) -> Iterator[GaugeMetricFamily | CounterMetricFamily]:
        with self._lock:
            samples = list(self._samples.values())
            syncs = dict(self._syncs)
        synced = CounterMetricFamily(
            "argocd_app_sync_total", "Sync operations finished, by phase.", labels=_SYNC_LABELS
        )
        for key, count in syncs.items():
            synced.add_metric(list(key), float(count))
        yield synced
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


def _sync_finished(before: AppSample, now: AppSample) -> bool:
    """Whether `now` shows an operation ending that `before` had not seen ended: a final
    phase with another `startedAt`, or the same operation moving into a final phase."""
    if now.operation not in _FINAL_PHASES or not now.operation_started:
        return False
    if before.operation_started != now.operation_started:
        return True
    return before.operation not in _FINAL_PHASES
