"""Argo Rollouts `Rollout`: spec table, typed view, and the checks Argo Rollouts applies.

Defaults (argo-rollouts `utils/defaults`): replicas 1, revisionHistoryLimit 10,
progressDeadlineSeconds 600, canary maxSurge/maxUnavailable "25%", scaleDownDelaySeconds and
abortScaleDownDelaySeconds 30 (both apply only with traffic routing for a canary; for
abortScaleDownDelaySeconds 0 means "never scale the canary down"), blue-green
autoPromotionEnabled true. Steps, analysis references and traffic routing have their own
modules (`rollout_steps`, `traffic_routing`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from headway.model import k8s, route_match_rules, selectors, traffic_routing
from headway.model import rollout_steps as rsteps
from headway.model import schema as s
from headway.model.diagnostics import Diagnostic
from headway.model.traffic_routing import TrafficRouting
from headway.model.views import view
from headway.model.yamlload import Document

__all__ = [
    "ROLLOUT_SPEC",
    "BlueGreenStrategy",
    "CanaryStrategy",
    "Rollout",
    "RolloutSpec",
    "parse_rollout",
]


@view
class PingPong:
    ping_service: str
    pong_service: str


@view
class CanaryStrategy:
    canary_service: str | None
    stable_service: str | None
    steps: tuple[rsteps.CanaryStep, ...]
    traffic_routing: TrafficRouting | None
    max_surge: int | str
    max_unavailable: int | str
    analysis: rsteps.BackgroundAnalysis | None
    anti_affinity: Mapping[str, Any] | None
    canary_metadata: rsteps.PodTemplateMetadata | None
    stable_metadata: rsteps.PodTemplateMetadata | None
    scale_down_delay_seconds: int
    scale_down_delay_revision_limit: int | None
    abort_scale_down_delay_seconds: int
    dynamic_stable_scale: bool
    ping_pong: PingPong | None
    min_pods_per_replica_set: int | None
    replica_progress_threshold: Mapping[str, Any] | None


@view
class BlueGreenStrategy:
    active_service: str
    preview_service: str | None
    preview_replica_count: int | None
    auto_promotion_enabled: bool
    auto_promotion_seconds: int
    max_unavailable: int | str
    scale_down_delay_seconds: int
    scale_down_delay_revision_limit: int | None
    abort_scale_down_delay_seconds: int
    pre_promotion_analysis: rsteps.RolloutAnalysis | None
    post_promotion_analysis: rsteps.RolloutAnalysis | None
    anti_affinity: Mapping[str, Any] | None
    preview_metadata: rsteps.PodTemplateMetadata | None
    active_metadata: rsteps.PodTemplateMetadata | None


@view
class Strategy:
    canary: CanaryStrategy | None
    blue_green: BlueGreenStrategy | None


@view
class WorkloadRef:
    api_version: str | None
    kind: str | None
    name: str | None
    scale_down: str | None


@view
class RollbackWindow:
    revisions: int | None


@view
class AnalysisRunHistory:
    successful_run_history_limit: int
    unsuccessful_run_history_limit: int


@view
class RolloutSpec:
    replicas: int
    selector: Mapping[str, Any] | None
    template: Mapping[str, Any] | None
    workload_ref: WorkloadRef | None
    min_ready_seconds: int
    revision_history_limit: int
    paused: bool
    progress_deadline_seconds: int
    progress_deadline_abort: bool
    restart_at: Any
    rollback_window: RollbackWindow | None
    strategy: Strategy
    analysis: AnalysisRunHistory


@view
class Rollout:
    api_version: str
    metadata: k8s.ObjectMeta
    spec: RolloutSpec
    kind: str = "Rollout"

    @property
    def name(self) -> str:
        return self.metadata.name or ""


# ---- checks -------------------------------------------------------------------------------


def _one_strategy(strategy: Mapping[str, Any], path: s.Path, report: s.Reporter) -> None:
    present = [k for k in ("canary", "blueGreen") if strategy.get(k) is not None]
    if not present:
        report.error((*path, "canary"), "a strategy needs canary or blueGreen")
    elif len(present) == 2:
        report.error((*path, "blueGreen"), "a strategy may set canary or blueGreen, not both")


def _canary_services(canary: Mapping[str, Any], path: s.Path, report: s.Reporter) -> None:
    stable, preview = canary.get("stableService"), canary.get("canaryService")
    if stable is not None and stable == preview:
        report.error((*path, "canaryService"), "stableService and canaryService must differ")
    routing = canary.get("trafficRouting")
    if isinstance(routing, Mapping):
        ping_pong = canary.get("pingPong") is not None
        if traffic_routing.needs_stable_and_canary(routing, ping_pong=ping_pong):
            for name in ("stableService", "canaryService"):
                if canary.get(name) is None:
                    report.error((*path, name), "required when trafficRouting is set")
        _routed_canary_options(canary, routing, path, report)
        return
    if canary.get("scaleDownDelaySeconds") is not None:
        report.error((*path, "scaleDownDelaySeconds"), "applies only with trafficRouting")
    if canary.get("dynamicStableScale") is True:
        report.error((*path, "dynamicStableScale"), "applies only with trafficRouting")


def _routed_canary_options(
    canary: Mapping[str, Any], routing: Mapping[str, Any], path: s.Path, report: s.Reporter
) -> None:
    """Argo Rollouts' rules for options that need a router: dynamicStableScale excludes
    scaleDownDelaySeconds; maxTrafficWeight is for nginx and plugin routers only."""
    if canary.get("scaleDownDelaySeconds") is not None and canary.get("dynamicStableScale") is True:
        report.error(
            (*path, "dynamicStableScale"), "cannot be set together with scaleDownDelaySeconds"
        )
    if routing.get("maxTrafficWeight") is not None and not _has_router(routing, "nginx", "plugins"):
        report.error(
            (*path, "trafficRouting", "maxTrafficWeight"),
            "is supported only with the nginx router or a plugin",
        )


def _has_router(routing: Mapping[str, Any] | None, *names: str) -> bool:
    return routing is not None and any(routing.get(name) for name in names)


def _surge_or_unavailable(strategy: Mapping[str, Any], path: s.Path, report: s.Reporter) -> None:
    """maxSurge and maxUnavailable cannot both be zero: the update could never move."""
    if _is_zero(strategy.get("maxSurge")) and _is_zero(strategy.get("maxUnavailable")):
        report.error((*path, "maxUnavailable"), "maxSurge and maxUnavailable cannot both be 0")


def _is_zero(value: Any) -> bool:
    return value in (0, "0%") and not isinstance(value, bool)


def _one_anti_affinity(block: Mapping[str, Any], path: s.Path, report: s.Reporter) -> None:
    present = [k for k, v in block.items() if v is not None]
    if len(present) != 1:
        report.error(
            path,
            "antiAffinity needs exactly one of preferred/required"
            "DuringSchedulingIgnoredDuringExecution",
        )


def _canary_step_rules(canary: Mapping[str, Any], path: s.Path, report: s.Reporter) -> None:
    routing = canary.get("trafficRouting")
    routing = routing if isinstance(routing, Mapping) else None
    max_weight = routing.get("maxTrafficWeight", 100) if routing else 100
    max_weight = max_weight if isinstance(max_weight, int) else 100
    managed = _managed_route_names(routing)
    step_list = canary.get("steps")
    weight_before = _weights_in_force(step_list)
    for index, step in enumerate(step_list if isinstance(step_list, list) else []):
        if not isinstance(step, Mapping):
            continue
        where = (*path, "steps", index)
        weight = step.get("setWeight")
        in_range = not isinstance(weight, int) or 0 <= weight <= max_weight
        if not in_range:
            report.error((*where, "setWeight"), f"{weight} is outside 0..{max_weight}")
        if all(step.get(key) is None for key in _STEP_KEYS_WITH_RULES):
            continue  # a setWeight, pause or analysis step: the rules below need one of these
        if step.get("setCanaryScale") is not None and routing is None:
            report.error((*where, "setCanaryScale"), "needs trafficRouting")
        _experiment_weights(step, where, routing=routing, canary_weight=weight_before.get(index, 0),
                            report=report)
        route_match_rules.check_route_matches(step, where, report)
        for kind, routers in _ROUTE_STEP_ROUTERS.items():
            route = step.get(kind)
            if not isinstance(route, Mapping):
                continue
            if not _has_router(routing, *routers):
                named = ", ".join(r.removesuffix("s") for r in routers)
                given = [k for k in traffic_routing.ROUTER_FIELDS if (routing or {}).get(k)]
                which = f" ({', '.join(given)} cannot do it)" if given else ""
                report.error((*where, kind), f"needs trafficRouting with one of: {named}{which}")
            elif route.get("name") not in managed:
                report.error(
                    (*where, kind, "name"), "must be listed in trafficRouting.managedRoutes"
                )


def _weights_in_force(steps: Any) -> dict[int, int]:
    """step index -> the canary weight the setWeight steps before it (and it) have set."""
    found: dict[int, int] = {}
    weight = 0
    for index, step in enumerate(steps if isinstance(steps, list) else []):
        if isinstance(step, Mapping) and isinstance(step.get("setWeight"), int):
            weight = step["setWeight"]
        found[index] = weight
    return found


def _experiment_weights(
    step: Mapping[str, Any], where: s.Path, *, routing: Mapping[str, Any] | None,
    canary_weight: int, report: s.Reporter,
) -> None:
    """Argo's rules for an experiment template's `weight` (a router that can split to it),
    and Headway's: the templates' weights and the canary's must leave the stable >= 0."""
    experiment = step.get("experiment")
    templates = experiment.get("templates") if isinstance(experiment, Mapping) else None
    weighted = [(i, t["weight"]) for i, t in enumerate(templates or [])
                if isinstance(t, Mapping) and isinstance(t.get("weight"), int)]
    for number, _ in weighted:
        at = (*where, "experiment", "templates", number, "weight")
        if routing is None:
            report.error(at, "cannot be set unless trafficRouting is enabled")
        elif not any(routing.get(r) is not None for r in _EXPERIMENT_WEIGHT_ROUTERS):
            used = next((r for r in routing if r in ("nginx", "traefik", "ambassador",
                         "appMesh", "apisix")), "this router")
            report.error(at, f"is only available with trafficRouting through istio, smi, alb "
                             f"or a plugin, not {used}")
    total = sum(w for _, w in weighted)
    if weighted and total + canary_weight > 100:
        report.error((*where, "experiment", "templates"),
                     f"the templates' weights ({total}) and the canary's ({canary_weight}) add "
                     "up to more than 100: the stable Service would get a negative share")


# What a step needs for any rule of `_canary_step_rules` past setWeight's range to apply.
_STEP_KEYS_WITH_RULES = ("setCanaryScale", "experiment", "setHeaderRoute", "setMirrorRoute")
# Routers Argo Rollouts accepts an experiment template's weight with (validation.go).
_EXPERIMENT_WEIGHT_ROUTERS = ("istio", "smi", "alb", "plugins")
# The routers Argo Rollouts accepts for each route step (validation.go).
_ROUTE_STEP_ROUTERS = {
    "setHeaderRoute": ("istio", "alb", "apisix", "plugins"),
    "setMirrorRoute": ("istio", "plugins"),
}


def _managed_route_names(routing: Mapping[str, Any] | None) -> set[Any]:
    routes = routing.get("managedRoutes") if routing else None
    if not isinstance(routes, list):
        return set()
    names = (r.get("name") for r in routes if isinstance(r, Mapping))
    return {name for name in names if isinstance(name, str)}


def _blue_green_services(bg: Mapping[str, Any], path: s.Path, report: s.Reporter) -> None:
    active = bg.get("activeService")
    if active is not None and active == bg.get("previewService"):
        report.error((*path, "previewService"), "activeService and previewService must differ")


def _deadline_and_history(spec: Mapping[str, Any], path: s.Path, report: s.Reporter) -> None:
    """Argo Rollouts' spec rules across fields, with its defaults (600 s, 0 s, 10)."""
    deadline = _int_or(spec.get("progressDeadlineSeconds"), 600)
    min_ready = _int_or(spec.get("minReadySeconds"), 0)
    if deadline <= min_ready:
        report.error(
            (*path, "progressDeadlineSeconds"),
            f"must be greater than minReadySeconds ({deadline} <= {min_ready})",
        )
    strategy = spec.get("strategy")
    blue_green = strategy.get("blueGreen") if isinstance(strategy, Mapping) else None
    limit = (
        blue_green.get("scaleDownDelayRevisionLimit") if isinstance(blue_green, Mapping) else None
    )
    history = _int_or(spec.get("revisionHistoryLimit"), 10)
    if isinstance(limit, int) and not isinstance(limit, bool) and limit > history:
        report.error(
            (*path, "strategy", "blueGreen", "scaleDownDelayRevisionLimit"),
            f"{limit} is above revisionHistoryLimit ({history})",
        )


def _int_or(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _pods_defined(spec: Mapping[str, Any], path: s.Path, report: s.Reporter) -> None:
    if spec.get("workloadRef") is not None:
        if spec.get("template"):
            report.error((*path, "template"), "must be empty when workloadRef is set")
        return
    for name in ("selector", "template"):
        if spec.get(name) is None:
            report.error((*path, name), "missing required field (or set workloadRef)")
    _selector_matches_template(spec, path, report)


def _selector_matches_template(spec: Mapping[str, Any], path: s.Path, report: s.Reporter) -> None:
    """The selector must be valid, non-empty, and select the pod template's own labels."""
    selector, template = spec.get("selector"), spec.get("template")
    if not isinstance(selector, Mapping):
        return
    where = (*path, "selector")
    try:
        parsed = selectors.selector_from_object(selector, path="selector")
    except selectors.SelectorError as err:
        report.error(where, str(err))
        return
    if parsed.is_everything:
        report.error(where, "an empty selector would select every pod")
        return
    meta = template.get("metadata") if isinstance(template, Mapping) else None
    labels = meta.get("labels") if isinstance(meta, Mapping) else None
    if not parsed.matches(labels if isinstance(labels, Mapping) else {}):
        report.error(where, f"{parsed} does not select the pod template's labels")


# ---- tables -------------------------------------------------------------------------------

_NON_NEGATIVE = s.Scalar("integer", minimum=0)
_ANTI_AFFINITY = s.Schema(
    "AntiAffinity",
    (
        s.Field(
            "preferredDuringSchedulingIgnoredDuringExecution",
            s.Obj(
                s.Schema(
                    "PreferredDuringScheduling",
                    (s.Field("weight", s.Scalar("integer", minimum=1, maximum=100), True),),
                )
            ),
        ),
        s.Field("requiredDuringSchedulingIgnoredDuringExecution", s.AnyValue(mapping=True)),
    ),
    checks=(_one_anti_affinity,),
)
_POD_META = s.Obj(rsteps.POD_TEMPLATE_METADATA)

CANARY = s.Schema(
    "CanaryStrategy",
    (
        s.Field("canaryService", s.STR),
        s.Field("stableService", s.STR),
        s.Field("steps", s.ListOf(s.Obj(rsteps.CANARY_STEP))),
        s.Field("trafficRouting", s.Obj(traffic_routing.TRAFFIC_ROUTING)),
        s.Field("maxSurge", s.INT_OR_PERCENT, default="25%"),
        s.Field("maxUnavailable", s.INT_OR_PERCENT, default="25%"),
        s.Field("analysis", s.Obj(rsteps.BACKGROUND_ANALYSIS)),
        s.Field("antiAffinity", s.Obj(_ANTI_AFFINITY)),
        s.Field("canaryMetadata", _POD_META),
        s.Field("stableMetadata", _POD_META),
        s.Field("scaleDownDelaySeconds", _NON_NEGATIVE, default=30),
        s.Field("scaleDownDelayRevisionLimit", _NON_NEGATIVE),
        s.Field("abortScaleDownDelaySeconds", _NON_NEGATIVE, default=30),
        s.Field("dynamicStableScale", s.BOOL, default=False),
        s.Field(
            "pingPong",
            s.Obj(
                s.Schema(
                    "PingPongSpec",
                    (
                        s.Field("pingService", s.STR, required=True),
                        s.Field("pongService", s.STR, required=True),
                    ),
                    PingPong,
                )
            ),
        ),
        s.Field("minPodsPerReplicaSet", s.Scalar("integer", minimum=1)),
        s.Field(
            "replicaProgressThreshold",
            s.Obj(
                s.Schema(
                    "ReplicaProgressThreshold",
                    (
                        s.Field("type", s.Enum(("Percent", "Pods")), required=True),
                        s.Field("value", _NON_NEGATIVE, required=True),
                    ),
                )
            ),
        ),
    ),
    CanaryStrategy,
    checks=(_canary_services, _canary_step_rules, _surge_or_unavailable),
)

BLUE_GREEN = s.Schema(
    "BlueGreenStrategy",
    (
        s.Field("activeService", s.STR, required=True),
        s.Field("previewService", s.STR),
        s.Field("previewReplicaCount", _NON_NEGATIVE),
        s.Field("autoPromotionEnabled", s.BOOL, default=True),
        s.Field("autoPromotionSeconds", _NON_NEGATIVE, default=0),
        s.Field("maxUnavailable", s.INT_OR_PERCENT, default="25%"),
        s.Field("scaleDownDelaySeconds", _NON_NEGATIVE, default=30),
        s.Field("scaleDownDelayRevisionLimit", _NON_NEGATIVE),
        s.Field("abortScaleDownDelaySeconds", _NON_NEGATIVE, default=30),
        s.Field("prePromotionAnalysis", s.Obj(rsteps.ROLLOUT_ANALYSIS)),
        s.Field("postPromotionAnalysis", s.Obj(rsteps.ROLLOUT_ANALYSIS)),
        s.Field("antiAffinity", s.Obj(_ANTI_AFFINITY)),
        s.Field("previewMetadata", _POD_META),
        s.Field("activeMetadata", _POD_META),
    ),
    BlueGreenStrategy,
    checks=(_blue_green_services,),
)

_STRATEGY = s.Schema(
    "RolloutStrategy",
    (s.Field("canary", s.Obj(CANARY)), s.Field("blueGreen", s.Obj(BLUE_GREEN))),
    Strategy,
    checks=(_one_strategy,),
)

ROLLOUT_SPEC = s.Schema(
    "RolloutSpec",
    (
        s.Field("replicas", _NON_NEGATIVE, default=1),
        s.Field("selector", s.AnyValue(mapping=True)),
        s.Field("template", s.AnyValue(mapping=True)),
        s.Field(
            "workloadRef",
            s.Obj(
                s.Schema(
                    "ObjectRef",
                    (
                        s.Field("apiVersion", s.STR),
                        s.Field("kind", s.STR),
                        s.Field("name", s.STR),
                        s.Field("scaleDown", s.Enum(("never", "onsuccess", "progressively"))),
                    ),
                    WorkloadRef,
                )
            ),
        ),
        s.Field("minReadySeconds", _NON_NEGATIVE, default=0),
        s.Field("revisionHistoryLimit", _NON_NEGATIVE, default=10),
        s.Field("paused", s.BOOL, default=False),
        s.Field("progressDeadlineSeconds", _NON_NEGATIVE, default=600),
        s.Field("progressDeadlineAbort", s.BOOL, default=False),
        s.Field("restartAt", s.ANY),
        s.Field(
            "rollbackWindow",
            s.Obj(
                s.Schema(
                    "RollbackWindowSpec", (s.Field("revisions", _NON_NEGATIVE),), RollbackWindow
                )
            ),
        ),
        s.Field("strategy", s.Obj(_STRATEGY), required=True),
        s.Field(
            "analysis",
            s.Obj(
                s.Schema(
                    "AnalysisRunStrategy",
                    (
                        s.Field("successfulRunHistoryLimit", _NON_NEGATIVE, default=5),
                        s.Field("unsuccessfulRunHistoryLimit", _NON_NEGATIVE, default=5),
                    ),
                    AnalysisRunHistory,
                )
            ),
            default={},
        ),
    ),
    RolloutSpec,
    checks=(_pods_defined, _deadline_and_history),
)


def parse_rollout(document: Document) -> tuple[Rollout | None, list[Diagnostic]]:
    parts, diagnostics = k8s.parse_typed(document, ROLLOUT_SPEC)
    if parts is None:
        return None, diagnostics
    return Rollout(parts.api_version, parts.metadata, parts.spec), diagnostics
