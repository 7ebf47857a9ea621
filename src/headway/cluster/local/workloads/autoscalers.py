"""The HorizontalPodAutoscaler controller (autoscaling/v2) of the local runtime.

One step per HPA: read the target's Scale (Deployments, StatefulSets, Rollouts, anything with
a scale subresource), find its Pods by the Scale's selector, measure each Resource metric
from the Pods' processes (`UsageReader`: CPU cores and memory bytes, None while there is no
sample yet), decide with `hpa_math`, write the new size through the Scale and the status
once. Kubernetes' order of decisions:
  * the target at 0 replicas with `minReplicas` above 0: autoscaling is off
    (ScalingActive False `ScalingDisabled`), nothing changes;
  * above `maxReplicas` / below `minReplicas` (default 1): straight to the bound;
  * otherwise the highest proposal of the metrics, through the stabilization windows and
    the `behavior` policies, clamped to min/max. A metric that cannot be computed
    (no request for a utilization, no sample yet) is ScalingActive False
    `FailedGetResourceMetric` and the size stays.
The recommendations and scale events the windows and policies look back on are kept in
memory per HPA, as kube-controller-manager keeps them: a restarted runtime starts afresh.
The Pods' usage changes without any write to the store, so each HPA asks to be looked at
again every `SYNC_PERIOD_SECONDS` (kube-controller-manager's sync period is 15 s; the local
runtime looks sooner, as its loop always did, so scaling follows load within a second).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from headway.clock import Clock
from headway.cluster.errors import ClusterError
from headway.cluster.local.workloads import hpa_math, hpa_status
from headway.cluster.local.workloads.hpa_status import Condition
from headway.cluster.local.workloads.recorder import note, reconcile_each
from headway.cluster.protocol import Cluster
from headway.kube.pod_facts import is_ready
from headway.kubetime import format_time
from headway.model.obj import Obj
from headway.model.quantities import QuantityError, parse_quantity
from headway.model.selectors import SelectorError, parse_selector

__all__ = ["Autoscalers", "UsageReader"]

FIELD_MANAGER = "headway-horizontal-pod-autoscaler"
UsageReader = Callable[[Obj], tuple[float | None, float | None]]
"""A Pod -> (CPU cores, memory bytes) it uses now; None for what has no sample yet."""

SYNC_PERIOD_SECONDS = 0.5
_HISTORY_SECONDS = 3600.0  # longer than any window or period Kubernetes accepts


@dataclass
class _Memory:
    recommendations: list[hpa_math.Recommendation] = field(default_factory=list)
    events: list[hpa_math.ScaleEvent] = field(default_factory=list)


@dataclass(frozen=True)
class _Decision:
    desired: int
    conditions: tuple[Condition, ...]
    metrics: tuple[Obj, ...] = ()


class Autoscalers:
    def __init__(self, *, usage: UsageReader) -> None:
        self._usage = usage
        self._memory: dict[str, _Memory] = {}

    def sync(self, cluster: Cluster, clock: Clock) -> float | None:
        hpas = cluster.list("autoscaling/v2", "HorizontalPodAutoscaler")
        alive = {str(h["metadata"].get("uid")) for h in hpas}
        self._memory = {uid: m for uid, m in self._memory.items() if uid in alive}
        return reconcile_each(cluster, clock, hpas, lambda h: self.reconcile(cluster, clock, h))

    def reconcile(self, cluster: Cluster, clock: Clock, hpa: Obj) -> float | None:
        meta, spec = hpa["metadata"], hpa.get("spec") or {}
        if meta.get("deletionTimestamp"):
            return None
        ref = spec.get("scaleTargetRef") or {}
        namespace = meta.get("namespace") or "default"
        try:
            scale = cluster.get_scale(str(ref.get("apiVersion", "")), str(ref.get("kind", "")),
                                      str(ref.get("name", "")), namespace)
        except ClusterError as err:
            failed = Condition("AbleToScale", False, "FailedGetScale",
                               f"the HPA controller was unable to get the target's current "
                               f"scale: {err}")
            self._write_status(cluster, clock, hpa, _Decision(0, (failed,)), current=0)
            return None
        memory = self._memory.setdefault(str(meta.get("uid")), _Memory())
        decision = self._decide(cluster, clock, hpa, scale, memory)
        current = int(scale["spec"]["replicas"])
        if decision.desired != current:
            cluster.update_scale(str(ref["apiVersion"]), str(ref["kind"]), str(ref["name"]),
                                 namespace, replicas=decision.desired,
                                 field_manager=FIELD_MANAGER)
            memory.events.append(hpa_math.ScaleEvent(decision.desired - current,
                                                     clock.monotonic()))
            note(cluster, clock, hpa, "SuccessfulRescale",
                 f"New size: {decision.desired}; reason: {_rescale_reason(decision)}")
        self._write_status(cluster, clock, hpa, decision,
                           current=int(scale["status"].get("replicas", 0)),
                           rescaled=decision.desired != current)
        return SYNC_PERIOD_SECONDS

    def _decide(
        self, cluster: Cluster, clock: Clock, hpa: Obj, scale: Obj, memory: _Memory
    ) -> _Decision:
        spec = hpa.get("spec") or {}
        current = int(scale["spec"]["replicas"])
        low, high = _min_replicas(spec), int(spec.get("maxReplicas") or 1)
        if current == 0 and low != 0:
            return _Decision(0, (Condition(
                "ScalingActive", False, "ScalingDisabled",
                "scaling is disabled since the replica count of the target is zero"),))
        if current > high or current < low:
            bound = high if current > high else low
            limit = "TooManyReplicas" if current > high else "TooFewReplicas"
            return _Decision(bound, (_ACTIVE, hpa_status.limited_message(limit)))
        try:
            proposal, metrics = self._proposal(cluster, hpa, scale, current)
        except ValueError as err:
            return _Decision(current, (Condition(
                "ScalingActive", False, "FailedGetResourceMetric", str(err)),))
        return _Decision(*_normalized(proposal, current=current, spec=spec, memory=memory,
                                      now=clock.monotonic()), metrics=metrics)

    def _proposal(
        self, cluster: Cluster, hpa: Obj, scale: Obj, current: int
    ) -> tuple[int, tuple[Obj, ...]]:
        targets = hpa_status.resource_targets(hpa.get("spec") or {})
        pods = _pods(cluster, hpa["metadata"].get("namespace") or "default",
                     str(scale["status"].get("selector") or ""))
        if not pods:
            raise ValueError("no pods matched the target's selector")
        usage = {str(p["metadata"]["name"]): self._usage(p) for p in pods}
        proposals, metrics = [], []
        for target in targets:
            samples = [_sample(p, target, usage[str(p["metadata"]["name"])]) for p in pods]
            if target.utilization:
                _require_requests(samples, target.resource)
            try:
                replicas, value = hpa_math.metric_proposal(
                    samples, target=target.target, utilization=target.utilization,
                    current=current)
            except ValueError as err:
                raise ValueError(f"failed to get {target.resource} utilization: {err}") from err
            proposals.append(replicas)
            metrics.append(target.current_json(value))
        return max(proposals), tuple(metrics)

    def _write_status(
        self, cluster: Cluster, clock: Clock, hpa: Obj, decision: _Decision, *, current: int,
        rescaled: bool = False,
    ) -> None:
        before = hpa.get("status") or {}
        able = decision.conditions[0].type != "AbleToScale"
        conditions = decision.conditions
        if able:
            conditions = (_able(rescaled, decision.desired), *conditions)
        status: dict[str, Any] = {
            "currentReplicas": current,
            "desiredReplicas": decision.desired,
            "currentMetrics": list(decision.metrics) or None,
            "lastScaleTime": format_time(clock.now()) if rescaled else before.get(
                "lastScaleTime"),
            "conditions": hpa_status.conditions_json(
                conditions, before.get("conditions") or [], now=format_time(clock.now())),
        }
        status = {k: v for k, v in status.items() if v is not None}
        if status != before:
            meta = hpa["metadata"]
            cluster.patch_status("autoscaling/v2", "HorizontalPodAutoscaler", meta["name"],
                                 meta.get("namespace"), status)


_ACTIVE = Condition("ScalingActive", True, "ValidMetricFound",
                    "the HPA was able to successfully calculate a replica count")


def _able(rescaled: bool, desired: int) -> Condition:
    if rescaled:
        return Condition("AbleToScale", True, "SucceededRescale",
                         f"the HPA controller was able to update the target scale to {desired}")
    return Condition("AbleToScale", True, "ReadyForNewScale",
                     "recommended size matches current size")


def _rescale_reason(decision: _Decision) -> str:
    limited = [c for c in decision.conditions if c.type == "ScalingLimited" and c.status]
    if limited and not decision.metrics:
        return "Current number of replicas outside of Spec.MinReplicas/MaxReplicas"
    return "resource metric above or below target" if decision.metrics else "limits"


def _min_replicas(spec: Mapping[str, Any]) -> int:
    raw = spec.get("minReplicas")
    return raw if isinstance(raw, int) else 1


def _normalized(
    proposal: int, *, current: int, spec: Mapping[str, Any], memory: _Memory, now: float
) -> tuple[int, tuple[Condition, ...]]:
    behavior = hpa_math.parse_behavior(spec.get("behavior"))
    memory.recommendations = [r for r in memory.recommendations if r.at > now - _HISTORY_SECONDS]
    memory.events = [e for e in memory.events if e.at > now - _HISTORY_SECONDS]
    stable = hpa_math.stabilized(proposal, current=current, history=memory.recommendations,
                                 behavior=behavior, now=now)
    memory.recommendations.append(hpa_math.Recommendation(proposal, now))
    limited = hpa_math.rate_limited(
        stable, current=current, events=memory.events, behavior=behavior, now=now,
        min_replicas=_min_replicas(spec), max_replicas=int(spec.get("maxReplicas") or 1))
    return limited.replicas, (_ACTIVE, hpa_status.limited_message(limited.reason))


def _pods(cluster: Cluster, namespace: str, selector_text: str) -> list[Obj]:
    try:
        selector = parse_selector(selector_text)
    except SelectorError as err:
        raise ValueError(f"the target's selector {selector_text!r}: {err}") from err
    if not selector_text:
        raise ValueError("the target has no selector to find its pods")
    return [p for p in cluster.list("v1", "Pod", namespace=namespace)
            if selector.matches(p["metadata"].get("labels") or {})
            and not p["metadata"].get("deletionTimestamp")
            and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]


def _sample(
    pod: Obj, target: hpa_status.ResourceTarget, usage: tuple[float | None, float | None]
) -> hpa_math.PodSample:
    value = usage[0] if target.resource == "cpu" else usage[1]
    return hpa_math.PodSample(name=str(pod["metadata"]["name"]), usage=value,
                              request=_request(pod, target.resource),
                              ready=is_ready(pod) or target.resource != "cpu")


def _request(pod: Obj, resource: str) -> float | None:
    total = 0.0
    for container in (pod.get("spec") or {}).get("containers") or []:
        raw = ((container.get("resources") or {}).get("requests") or {}).get(resource)
        try:
            total += float(parse_quantity(raw))
        except QuantityError:
            return None
    return total


def _require_requests(samples: list[hpa_math.PodSample], resource: str) -> None:
    for sample in samples:
        if sample.request is None or math.isclose(sample.request, 0.0):
            raise ValueError(f"failed to get {resource} utilization: missing request for "
                             f"{resource} in pod {sample.name}")
