"""Progressive delivery that does not gate: empty canaries, ungated promotion, coarse weights.

Seed 002 §5.5: "An empty canary is a rolling update with a nicer name"; §3.6 on blue-green,
queue consumers and replica-count weights; seed 003 on pauses that only buy time.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable, Iterator
from typing import Any

from headway.check.context import AppUnit, CheckContext
from headway.check.findings import Finding, Rule, Severity, finding_at
from headway.check.gates import canary_of, gate_refs, strategy_of
from headway.check.manifest import as_dict, as_list, container_specs
from headway.kube.fenceposts import resolve_int_or_percent
from headway.model.yamlload import Document
from headway.rollout.canary_replicas import (
    CanaryScale,
    approximate_weighted_counts,
    replica_weight_percent,
)

__all__ = [
    "BLUE_GREEN_UNGATED",
    "CANARY_WITHOUT_ANALYSIS",
    "CANARY_WITHOUT_STEPS",
    "EXPERIMENT_NEVER_ENDS",
    "HEADER_ROUTE_WITHOUT_CANARY_PODS",
    "MIRROR_WITHOUT_CANARY_PODS",
    "QUEUE_CONSUMER_CANARY",
    "REPLICA_WEIGHT_APPROXIMATION",
    "check_blue_green_ungated",
    "check_canary_gates",
    "check_experiment_ends",
    "check_queue_consumer_canary",
    "check_replica_weights",
    "check_route_targets",
]

CANARY_WITHOUT_STEPS = Rule(
    id="HW201",
    slug="canary-without-steps",
    severity=Severity.ERROR,
    title="A canary with no steps",
    rationale="Seed 002 §5.5: an audit found 21 Rollouts with `steps: []` — every one a rolling "
    "update with a nicer name, and `steps: []` is dropped by the API server, so the "
    "Application never reads Synced.",
    hint="Add setWeight/pause/analysis steps with a real gate, or render a plain Deployment.",
)
CANARY_WITHOUT_ANALYSIS = Rule(
    id="HW202",
    slug="canary-without-analysis",
    severity=Severity.WARNING,
    title="A canary whose steps never run an analysis",
    rationale="Seed 003: a pause only buys time; someone still has to decide. Seed 002 §4.2: "
    "without analysis the rollback trigger is a timeout.",
    hint="Add an `analysis` step or background `canary.analysis` with an SLI template.",
)
REPLICA_WEIGHT_APPROXIMATION = Rule(
    id="HW208",
    slug="replica-weight-approximation",
    severity=Severity.WARNING,
    title="A setWeight that replica counts cannot express without a traffic router",
    rationale="Seed 002 §3.6: with 3 replicas, `setWeight: 10` really means one pod in four.",
    hint="Add a trafficRouting block (mesh, ingress, Gateway API), or choose weights the "
    "replica count can express, or raise the replica count.",
)
BLUE_GREEN_UNGATED = Rule(
    id="HW209",
    slug="blue-green-ungated-promotion",
    severity=Severity.WARNING,
    title="Blue-green that auto-promotes with no pre-promotion analysis",
    rationale="Seed 002 §3.6: the gate of a blue-green is prePromotionAnalysis against the "
    "preview Service; auto-promotion without it switches all traffic on readiness alone.",
    hint="Add prePromotionAnalysis, or set autoPromotionEnabled: false with a human gate.",
)
QUEUE_CONSUMER_CANARY = Rule(
    id="HW210",
    slug="queue-consumer-canary",
    severity=Severity.WARNING,
    title="A canary for a workload that consumes from a queue",
    rationale="Seed 002 §3.6: canary and stable both consume from RabbitMQ or SQS; without "
    "routing at the broker, '10% of traffic' is meaningless.",
    hint="Gate on a functional E2E analysis, route at the broker, or use blue-green with a "
    "preview that does not consume.",
)
MIRROR_WITHOUT_CANARY_PODS = Rule(
    id="HW216",
    slug="mirror-without-canary-pods",
    severity=Severity.WARNING,
    title="A setMirrorRoute step while the canary has no pods",
    rationale="With a traffic router the canary runs as many pods as its weight needs: at "
    "weight 0, none. A mirror step there copies requests to a Service with no endpoint, so "
    "the shadow traffic the step stands for reaches nothing and the step passes anyway.",
    hint="Put a setCanaryScale (replicas or weight) before the mirror step, as Argo "
    "Rollouts' istio-mirror example does.",
)
HEADER_ROUTE_WITHOUT_CANARY_PODS = Rule(
    id="HW218",
    slug="header-route-without-canary-pods",
    severity=Severity.WARNING,
    title="A setHeaderRoute step while the canary has no pods",
    rationale="At weight 0 with no setCanaryScale a routed canary has no pods, and the "
    "controller withholds every header route until a canary pod is available (a route to a "
    "Service with no endpoint would send each matching user to errors). The step passes, but "
    "header-matching requests keep going to stable until a later step gives the canary pods.",
    hint="Put a setCanaryScale (replicas or weight) or a setWeight above 0 before the "
    "header step.",
)

EXPERIMENT_NEVER_ENDS = Rule(
    id="HW217",
    slug="experiment-never-ends",
    severity=Severity.WARNING,
    title="An experiment step whose Experiment never ends by itself",
    rationale="An Experiment without a duration runs until every analysis marked "
    "requiredForCompletion has finished, or until it is terminated; with neither, it never "
    "completes and the Rollout waits at the step forever.",
    hint="Give the experiment a `duration`, or mark the analysis that judges it "
    "`requiredForCompletion: true`.",
)

_QUEUE_HINTS = re.compile(
    r"amqps?://|sqs[.:]|\bsqs\b|rabbitmq|kafka|nats://|pubsub|sns[.:]|queue[_-]?url|"
    r"_queue\b|\bqueue_|broker",
    re.IGNORECASE,
)


def _rollouts(ctx: CheckContext) -> Iterator[tuple[AppUnit, Document]]:
    return iter(ctx.units_of_kind("Rollout"))


def check_canary_gates(ctx: CheckContext) -> Iterable[Finding]:
    for unit, rollout in _rollouts(ctx):
        canary = canary_of(rollout)
        if canary is None:
            continue
        steps = as_list(canary.get("steps"))
        if not steps:
            yield finding_at(
                CANARY_WITHOUT_STEPS,
                rollout,
                path=("spec", "strategy", "canary"),
                message=f"Rollout/{rollout.name} has no canary steps: this Rollout has no gate, "
                "it is a rolling update with a nicer name — a bad version reaches every pod "
                "before anyone or anything decides",
                app=unit.name,
            )
        elif not any(True for _ in gate_refs(ctx, unit, rollout)):
            yield finding_at(
                CANARY_WITHOUT_ANALYSIS,
                rollout,
                path=("spec", "strategy", "canary", "steps"),
                message=f"Rollout/{rollout.name} {_steps_summary(steps)} but never runs an "
                "analysis: its steps only buy time, so a broken version is promoted when they "
                "end unless a person happens to be watching",
                app=unit.name,
            )


def _steps_summary(steps: list[Any]) -> str:
    """What the steps do, for HW202: how many of them move traffic (an experiment or a pause
    moves none)."""
    shifting = sum(1 for step in steps if "setWeight" in as_dict(step))
    if shifting:
        return f"shifts traffic in {_count(shifting, 'step')}"
    return f"has {_count(len(steps), 'step')} and none shifts traffic,"


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def _replica_count(ctx: CheckContext, unit: AppUnit, rollout: Document) -> int:
    spec = as_dict(as_dict(rollout.obj).get("spec"))
    if isinstance(spec.get("replicas"), int):
        return int(spec["replicas"])
    for hpa in unit.of_kind("HorizontalPodAutoscaler"):
        target = as_dict(as_dict(as_dict(hpa.obj).get("spec")).get("scaleTargetRef"))
        if target.get("kind") == "Rollout" and target.get("name") == rollout.name:
            minimum = as_dict(as_dict(hpa.obj).get("spec")).get("minReplicas", 1)
            return int(minimum) if isinstance(minimum, int) else 1
    return 1


def _max_surge(canary: dict[str, Any], replicas: int) -> int:
    try:
        return resolve_int_or_percent(canary.get("maxSurge", "25%"), replicas, round_up=True)
    except ValueError:
        return 1


def check_replica_weights(ctx: CheckContext) -> Iterable[Finding]:
    for unit, rollout in _rollouts(ctx):
        canary = canary_of(rollout)
        if canary is None or canary.get("trafficRouting"):
            continue
        replicas = _replica_count(ctx, unit, rollout)
        surge = _max_surge(canary, replicas)
        for index, step in enumerate(as_list(canary.get("steps"))):
            weight = as_dict(step).get("setWeight")
            if not isinstance(weight, int) or not 0 < weight < 100:
                continue
            scale, actual = _served_split(replicas, weight, surge)
            if not _misleading(weight, actual):
                continue
            yield finding_at(
                REPLICA_WEIGHT_APPROXIMATION,
                rollout,
                path=("spec", "strategy", "canary", "steps", index, "setWeight"),
                message=f"setWeight {weight} on Rollout/{rollout.name} with {replicas} replicas "
                f"and no traffic router runs {scale.canary} canary pod(s) beside "
                f"{scale.stable} stable: the canary really takes {actual:.0f}% of traffic, "
                f"not {weight}%",
                app=unit.name,
            )


def check_route_targets(ctx: CheckContext) -> Iterable[Finding]:
    """HW216 and HW218: a mirror or header route step with a `match` at a point of the steps
    where a routed canary has no pods."""
    for unit, rollout in _rollouts(ctx):
        canary = canary_of(rollout)
        if canary is None or not canary.get("trafficRouting"):
            continue
        replicas = _replica_count(ctx, unit, rollout)
        weight, scale = 0, dict[str, Any]()
        for index, raw in enumerate(as_list(canary.get("steps"))):
            step = as_dict(raw)
            weight = step["setWeight"] if isinstance(step.get("setWeight"), int) else weight
            scale = as_dict(step["setCanaryScale"]) if "setCanaryScale" in step else scale
            if _routed_canary_pods(replicas, weight, scale):
                continue
            for kind in ("setMirrorRoute", "setHeaderRoute"):
                route = as_dict(step.get(kind))
                if as_list(route.get("match")):
                    yield finding_at(
                        MIRROR_WITHOUT_CANARY_PODS if kind == "setMirrorRoute"
                        else HEADER_ROUTE_WITHOUT_CANARY_PODS,
                        rollout,
                        path=("spec", "strategy", "canary", "steps", index, kind),
                        message=f"{kind} '{route.get('name')}' on Rollout/{rollout.name} runs "
                        f"at weight {weight} with no canary pods: {_EMPTY_CANARY_EFFECT[kind]}",
                        app=unit.name,
                    )


_EMPTY_CANARY_EFFECT = {
    "setMirrorRoute": "the copies go to a Service with no endpoint, so the canary never sees "
    "the shadow traffic",
    "setHeaderRoute": "the route is withheld until a canary pod is available, so "
    "header-matching requests stay on stable until a later step gives the canary pods",
}


def _routed_canary_pods(replicas: int, weight: int, scale: dict[str, Any]) -> int:
    """The canary's pods with a traffic router: the setCanaryScale in force, else (or with
    matchTrafficWeight) enough for the weight."""
    if scale and not scale.get("matchTrafficWeight"):
        if isinstance(scale.get("replicas"), int):
            return int(scale["replicas"])
        if isinstance(scale.get("weight"), int):
            return math.ceil(replicas * int(scale["weight"]) / 100)
    return math.ceil(replicas * weight / 100)


@functools.lru_cache(maxsize=1024)
def _served_split(replicas: int, weight: int, surge: int) -> tuple[CanaryScale, float]:
    """The pods a setWeight runs without a traffic router, and the share of traffic the
    canary really takes, worked out once per (replicas, weight, surge): a repository's
    Rollouts repeat the same few (pure arithmetic on integers)."""
    scale = approximate_weighted_counts(replicas, weight, 100, surge)
    return scale, replica_weight_percent(scale.canary, scale.stable)


def _misleading(weight: int, actual: float) -> bool:
    """Off by at least 5 points, or by half of what was asked (5% asked, 9% served)."""
    gap = abs(actual - weight)
    return gap >= 1 and (gap >= 5 or gap / weight >= 0.5)


def check_blue_green_ungated(ctx: CheckContext) -> Iterable[Finding]:
    for unit, rollout in _rollouts(ctx):
        blue_green = as_dict(strategy_of(rollout).get("blueGreen"))
        if not blue_green or blue_green.get("autoPromotionEnabled") is False:
            continue
        if blue_green.get("prePromotionAnalysis"):
            continue
        yield finding_at(
            BLUE_GREEN_UNGATED,
            rollout,
            path=("spec", "strategy", "blueGreen"),
            message=f"Rollout/{rollout.name} promotes its preview automatically "
            "(autoPromotionEnabled defaults to true) with no prePromotionAnalysis: every pod "
            "switches to the new version as soon as it is Ready, whether or not it works",
            app=unit.name,
        )


def check_queue_consumer_canary(ctx: CheckContext) -> Iterable[Finding]:
    for unit, rollout in _rollouts(ctx):
        if canary_of(rollout) is None:
            continue
        evidence = _queue_evidence(rollout)
        if evidence is None:
            continue
        yield finding_at(
            QUEUE_CONSUMER_CANARY,
            rollout,
            path=("spec", "strategy", "canary"),
            message=f"Rollout/{rollout.name} looks like a queue consumer ({evidence}): canary "
            "and stable pods both pull from the broker, so the canary's share of messages "
            "follows its pod count, not setWeight, and HTTP metrics say nothing about it",
            app=unit.name,
        )


def _queue_evidence(rollout: Document) -> str | None:
    for container in container_specs(rollout.obj):
        for raw_env in as_list(container.get("env")):
            env = as_dict(raw_env)
            text = f"{env.get('name', '')}={env.get('value', '')}"
            if _QUEUE_HINTS.search(text):
                return f"env {env.get('name')} of container {container.get('name')}"
        for key in ("args", "command"):
            for arg in as_list(container.get(key)):
                if _QUEUE_HINTS.search(str(arg)):
                    return f"{key} of container {container.get('name')}: {str(arg)[:60]}"
    return None


def check_experiment_ends(ctx: CheckContext) -> Iterable[Finding]:
    for unit, rollout in _rollouts(ctx):
        canary = canary_of(rollout)
        for index, raw in enumerate(as_list((canary or {}).get("steps"))):
            experiment = as_dict(as_dict(raw).get("experiment"))
            if not as_dict(raw).get("experiment") or _experiment_ends(experiment):
                continue
            yield finding_at(
                EXPERIMENT_NEVER_ENDS,
                rollout,
                path=("spec", "strategy", "canary", "steps", index, "experiment"),
                message=f"step {index} of Rollout/{rollout.name} runs an Experiment with no "
                "duration and no analysis marked requiredForCompletion: it runs until "
                "terminated, and the Rollout waits at this step forever",
                app=unit.name,
            )


def _experiment_ends(experiment: dict[str, Any]) -> bool:
    """Argo's Experiment completes when its duration has passed or, without one, when every
    analysis marked requiredForCompletion has finished (a failure ends it too, as an abort)."""
    if experiment.get("duration") not in (None, ""):
        return True
    return any(as_dict(a).get("requiredForCompletion") is True
               for a in as_list(experiment.get("analyses")))
