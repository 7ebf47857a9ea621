"""Prometheus metrics of Applications, ApplicationSets, Rollouts and AnalysisRuns, under
Argo's names.

Samples are computed from each object when it changes (the `metrics-*` step controllers
watch the three kinds) and kept in memory; a scrape only reads them, never the store.

Argo CD: `argocd_app_info{name, namespace, project, dest_server, dest_namespace, repo,
sync_status, health_status, operation, autosync_enabled}`, `argocd_app_condition{name,
namespace, project, condition}`, `argocd_appset_info{name, namespace,
resource_update_status}` and `argocd_appset_owned_applications{name, namespace}`. Argo
Rollouts: `rollout_info{namespace, name, strategy, traffic_router, phase}`,
`rollout_info_replicas_desired` / `_available` / `_updated`,
`analysis_run_info{namespace, name, phase}`, `analysis_run_metric_type{namespace, name,
metric, type}` and `analysis_run_metric_phase{namespace, name, metric, type, phase}` (1 for
the current phase, 0 for the others). Headway's own: `headway_rollout_aborted{namespace,
name}`, `headway_rollout_step_index` / `headway_rollout_steps{namespace, name}` (a
canary's current step and how many it has) and `headway_rollout_git_revert{namespace, name,
result}` (the last Git convergence outcome: Reverted, AlreadyReverted, Refused, Disabled),
and two durations measured on the clock from the first step that saw the state (so they
restart with the process):
`headway_app_out_of_sync_seconds{name, namespace}` and
`headway_app_sync_wave_waiting_seconds{name, namespace, phase, wave}` (a running sync's
current wave, not yet passed). docs/metrics.md has the whole table.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from headway.clock import Clock
from headway.cluster.errors import NotFound
from headway.cluster.protocol import Cluster
from headway.controllers.manager import ObjectKey
from headway.kubetime import parse_time
from headway.model.obj import Obj

__all__ = [
    "METRIC_HELP",
    "ObjectMetrics",
    "ObjectMetricsSteps",
    "Sample",
    "analysis_run_samples",
    "application_samples",
    "application_set_samples",
    "rollout_samples",
]

ARGO_API = "argoproj.io/v1alpha1"
MEASUREMENT_PHASES = ("Pending", "Running", "Successful", "Failed", "Error", "Inconclusive")
_PROVIDERS = ("prometheus", "datadog", "newRelic", "wavefront", "kayenta", "web", "job",
              "cloudWatch", "graphite", "influxdb", "skywalking", "plugin")
_ROUTERS = ("istio", "nginx", "alb", "smi", "ambassador", "appMesh", "traefik", "apisix",
            "plugins")

METRIC_HELP: dict[str, tuple[str, tuple[str, ...]]] = {
    "argocd_app_info": ("Information about an Application (always 1).", (
        "name", "namespace", "project", "dest_server", "dest_namespace", "repo",
        "sync_status", "health_status", "operation", "autosync_enabled")),
    "argocd_app_condition": ("An Application's condition (always 1).",
                             ("name", "namespace", "project", "condition")),
    "rollout_info": ("Information about a Rollout (always 1).",
                     ("namespace", "name", "strategy", "traffic_router", "phase")),
    "rollout_info_replicas_desired": ("Replicas the Rollout wants.", ("namespace", "name")),
    "rollout_info_replicas_available": ("Available replicas.", ("namespace", "name")),
    "rollout_info_replicas_updated": ("Replicas of the newest revision.", ("namespace", "name")),
    "analysis_run_info": ("Information about an AnalysisRun (always 1).",
                          ("namespace", "name", "phase")),
    "analysis_run_metric_type": ("The provider of each metric of a run (always 1).",
                                 ("namespace", "name", "metric", "type")),
    "analysis_run_metric_phase": ("1 for the current phase of each metric of a run.",
                                  ("namespace", "name", "metric", "type", "phase")),
    "headway_analysis_run_metric_value": (
        "The last measured value of each metric of a run, when it is one number.",
        ("namespace", "name", "metric")),
    "headway_analysis_run_metric_measurements": (
        "How many measurements of each metric of a run ended in each phase.",
        ("namespace", "name", "metric", "phase")),
    "headway_rollout_aborted": ("1 while the Rollout is aborted.", ("namespace", "name")),
    "headway_rollout_step_index": (
        "The canary step the Rollout is at (status.currentStepIndex; = steps when done).",
        ("namespace", "name")),
    "headway_rollout_steps": ("How many canary steps the Rollout has.", ("namespace", "name")),
    "headway_app_out_of_sync_seconds": (
        "How long the Application has been OutOfSync, as this process saw it.",
        ("name", "namespace")),
    "headway_app_sync_wave_waiting_seconds": (
        "How long a running sync has been at its current wave without passing it.",
        ("name", "namespace", "phase", "wave")),
    "headway_rollout_git_revert": (
        "1 for the outcome of the Git revert after the Rollout's last abort.",
        ("namespace", "name", "result")),
    "headway_promotion_gate_waiting_seconds": (
        "How long a promotion has been held at a gate (Pending: its turn and the previous "
        "environment's health; AwaitingApproval: a human).",
        ("namespace", "name", "environment", "gate")),
    "argocd_appset_info": ("Information about an ApplicationSet (always 1).",
                           ("name", "namespace", "resource_update_status")),
    "argocd_appset_owned_applications": ("Applications the ApplicationSet manages.",
                                         ("name", "namespace")),
}


@dataclass(frozen=True)
class Sample:
    metric: str
    labels: tuple[str, ...]  # in the order METRIC_HELP names them
    value: float


def _meta(obj: Obj) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def application_samples(app: Obj) -> list[Sample]:
    namespace, name = _meta(app)
    spec, status = app.get("spec") or {}, app.get("status") or {}
    dest = spec.get("destination") or {}
    source: Obj = spec.get("source") or next(iter(spec.get("sources") or []), {})
    project = str(spec.get("project") or "default")
    automated = (spec.get("syncPolicy") or {}).get("automated") is not None
    info = (
        name, namespace, project, str(dest.get("server") or dest.get("name") or ""),
        str(dest.get("namespace") or ""), str(source.get("repoURL") or ""),
        str((status.get("sync") or {}).get("status") or "Unknown"),
        str((status.get("health") or {}).get("status") or "Unknown"),
        str((status.get("operationState") or {}).get("phase") or ""),
        "true" if automated else "false",
    )
    conditions = {str(c.get("type")) for c in status.get("conditions") or []}
    return [Sample("argocd_app_info", info, 1.0)] + [
        Sample("argocd_app_condition", (name, namespace, project, c), 1.0)
        for c in sorted(conditions)
    ]


def _router(strategy: Obj) -> str:
    routing = (strategy.get("canary") or {}).get("trafficRouting") or {}
    found = [r for r in _ROUTERS if r in routing]
    return ",".join(found) or ("headway" if routing else "")


def rollout_samples(ro: Obj) -> list[Sample]:
    namespace, name = _meta(ro)
    spec, status = ro.get("spec") or {}, ro.get("status") or {}
    strategy = spec.get("strategy") or {}
    kind = "blueGreen" if "blueGreen" in strategy else "canary"
    phase = str(status.get("phase") or "Progressing")
    key = (namespace, name)
    out = [
        Sample("rollout_info", (namespace, name, kind, _router(strategy), phase), 1.0),
        Sample("rollout_info_replicas_desired", key, float(spec.get("replicas", 1) or 0)),
        Sample("rollout_info_replicas_available", key,
               float(status.get("availableReplicas") or 0)),
        Sample("rollout_info_replicas_updated", key, float(status.get("updatedReplicas") or 0)),
        Sample("headway_rollout_aborted", key, 1.0 if status.get("abort") else 0.0),
        *_step_samples(key, strategy, status),
    ]
    annotations = (ro.get("metadata") or {}).get("annotations") or {}
    try:
        revert = json.loads(annotations.get("headway.dev/git-convergence") or "null")
    except ValueError:
        revert = None
    if isinstance(revert, dict) and revert.get("result"):
        out.append(Sample("headway_rollout_git_revert", (*key, str(revert["result"])), 1.0))
    return out


def _step_samples(key: tuple[str, str], strategy: Obj, status: Obj) -> list[Sample]:
    """Where a canary is in its steps, so a dashboard can draw the step over time (Argo has
    no metric for it); none for blue-green or a canary without steps."""
    steps = (strategy.get("canary") or {}).get("steps") or []
    if not steps:
        return []
    return [Sample("headway_rollout_step_index", key, float(status.get("currentStepIndex") or 0)),
            Sample("headway_rollout_steps", key, float(len(steps)))]


def _provider(metric: Obj) -> str:
    provider = metric.get("provider") or {}
    return next((p for p in _PROVIDERS if p in provider), next(iter(provider), ""))


def analysis_run_samples(run: Obj) -> list[Sample]:
    namespace, name = _meta(run)
    status = run.get("status") or {}
    phases = {str(r.get("name")): str(r.get("phase") or "Pending")
              for r in status.get("metricResults") or []}
    out = [Sample("analysis_run_info",
                  (namespace, name, str(status.get("phase") or "Pending")), 1.0)]
    for metric in (run.get("spec") or {}).get("metrics") or []:
        metric_name, provider = str(metric.get("name")), _provider(metric)
        current = phases.get(metric_name, "Pending")
        out.append(Sample("analysis_run_metric_type", (namespace, name, metric_name, provider),
                          1.0))
        out += [
            Sample("analysis_run_metric_phase", (namespace, name, metric_name, provider, p),
                   1.0 if p == current else 0.0)
            for p in MEASUREMENT_PHASES
        ]
    for result in status.get("metricResults") or []:
        out += _measured(namespace, name, result)
    return out


_COUNTED = (("successful", "Successful"), ("failed", "Failed"),
            ("inconclusive", "Inconclusive"), ("error", "Error"))


def _measured(namespace: str, name: str, result: Obj) -> list[Sample]:
    """What a metric measured (the decision journal keeps every value; a scrape sees the
    last): the counters of its result and its last value when that is one number
    (`0.09`, `[0.09]`)."""
    metric = str(result.get("name"))
    out = [
        Sample("headway_analysis_run_metric_measurements", (namespace, name, metric, phase),
               float(result.get(key) or 0))
        for key, phase in _COUNTED
    ]
    measurements = result.get("measurements") or []
    value = _one_number(measurements[-1].get("value")) if measurements else None
    if value is not None:
        out.append(Sample("headway_analysis_run_metric_value", (namespace, name, metric), value))
    return out


def _one_number(text: object) -> float | None:
    try:
        parsed = json.loads(str(text))
    except ValueError:
        return None
    if isinstance(parsed, list) and len(parsed) == 1:
        parsed = parsed[0]
    if isinstance(parsed, bool) or not isinstance(parsed, int | float):
        return None
    return float(parsed)


def application_waits(app: Obj) -> dict[tuple[str, ...], tuple[str, tuple[str, ...]]]:
    """The states of an app whose duration is a metric: state key -> (metric, labels)."""
    namespace, name = _meta(app)
    status = app.get("status") or {}
    out: dict[tuple[str, ...], tuple[str, tuple[str, ...]]] = {}
    if (status.get("sync") or {}).get("status") == "OutOfSync":
        out[("out-of-sync",)] = ("headway_app_out_of_sync_seconds", (name, namespace))
    operation = status.get("operationState") or {}
    cursor = operation.get("wave") or {}
    if operation.get("phase") == "Running" and cursor and not cursor.get("passed"):
        phase, wave = str(cursor.get("phase") or ""), str(cursor.get("wave", ""))
        out[("wave", phase, wave)] = (
            "headway_app_sync_wave_waiting_seconds", (name, namespace, phase, wave)
        )
    return out


def application_set_samples(appset: Obj) -> list[Sample]:
    """Argo CD's `argocd_appset_info` (with the ResourcesUpToDate condition's status) and
    `argocd_appset_owned_applications`."""
    namespace, name = _meta(appset)
    status = appset.get("status") or {}
    conditions = {str(c.get("type")): c for c in status.get("conditions") or []}
    up_to_date = str((conditions.get("ResourcesUpToDate") or {}).get("status") or "Unknown")
    owned = float(len(status.get("resources") or []))
    return [
        Sample("argocd_appset_info", (name, namespace, up_to_date), 1.0),
        Sample("argocd_appset_owned_applications", (name, namespace), owned),
    ]


def promotion_gate_waits(promotion: Obj) -> dict[tuple[str, ...], tuple[str, tuple[str, ...],
                                                                        float]]:
    """A promotion held at a gate: state key -> (metric, labels, since when), the start read
    from the object (so the wait survives a restart): `spec.requestedAt` (else its creation)
    while Pending, `status.approval.requestedAt` while AwaitingApproval."""
    namespace, name = _meta(promotion)
    spec, status = promotion.get("spec") or {}, promotion.get("status") or {}
    phase = str(status.get("phase") or "Pending")
    if phase == "Pending":
        started = spec.get("requestedAt") or (promotion.get("metadata") or {}).get(
            "creationTimestamp")
    elif phase == "AwaitingApproval":
        started = (status.get("approval") or {}).get("requestedAt")
    else:
        return {}
    since = parse_time(started)
    if since is None:
        return {}
    labels = (namespace, name, str(spec.get("environment") or ""), phase)
    return {("gate", phase): ("headway_promotion_gate_waiting_seconds", labels,
                              since.timestamp())}


_SAMPLERS = {
    "Application": application_samples,
    "Promotion": lambda _: [],
    "ApplicationSet": application_set_samples,
    "Rollout": rollout_samples,
    "AnalysisRun": analysis_run_samples,
}


class ObjectMetrics(Collector):
    """The latest samples per object; Prometheus reads them at scrape time."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._samples: dict[tuple[str, str, str], list[Sample]] = {}
        # per object: state key -> (metric, labels, first seen at)
        self._since: dict[tuple[str, str, str], dict[tuple[str, ...], tuple[Any, ...]]] = {}
        self._lock = threading.Lock()

    def observe(self, kind: str, obj: Obj) -> None:
        samples = _SAMPLERS[kind](obj)
        key = (kind, *_meta(obj))
        now = self._clock.now().timestamp()
        waits = application_waits(obj) if kind == "Application" else {}
        with self._lock:
            self._samples[key] = samples
            before = self._since.get(key, {})
            self._since[key] = {
                state: (metric, labels, before[state][2] if state in before else now)
                for state, (metric, labels) in waits.items()
            }
            if kind == "Promotion":
                self._since[key] = dict(promotion_gate_waits(obj))

    def forget(self, kind: str, namespace: str, name: str) -> None:
        with self._lock:
            self._samples.pop((kind, namespace, name), None)
            self._since.pop((kind, namespace, name), None)

    def collect(self) -> Iterator[GaugeMetricFamily]:
        now = self._clock.now().timestamp()
        with self._lock:
            samples = [s for group in self._samples.values() for s in group]
            samples += [
                Sample(metric, labels, now - since)
                for states in self._since.values()
                for metric, labels, since in states.values()
            ]
        families = {
            metric: GaugeMetricFamily(metric, help_text, labels=list(labels))
            for metric, (help_text, labels) in METRIC_HELP.items()
        }
        for sample in samples:
            families[sample.metric].add_metric(list(sample.labels), sample.value)
        yield from families.values()


class ObjectMetricsSteps:
    """Keeps `ObjectMetrics` current for one kind: one step per changed object."""

    def __init__(
        self, cluster: Cluster, metrics: ObjectMetrics, kind: str, *, api_version: str = ARGO_API
    ) -> None:
        self.name = f"metrics-{kind.lower()}s"
        self.watches: Sequence[tuple[str, str]] = ((api_version, kind),)
        self._cluster, self._metrics, self._kind = cluster, metrics, kind
        self._api = api_version

    def keys_for(self, obj: Obj) -> Iterable[ObjectKey]:
        return [ObjectKey(*_meta(obj))]

    def step(self, key: ObjectKey) -> float | None:
        try:
            obj = self._cluster.get(self._api, self._kind, key.name, key.namespace or None)
        except NotFound:
            self._metrics.forget(self._kind, key.namespace, key.name)
            return None
        self._metrics.observe(self._kind, obj)
        return None
