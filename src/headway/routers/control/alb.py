"""AWS ALB traffic routing: the load balancer controller's action annotation, as Argo writes it.

Checked against argo-rollouts `rollout/trafficrouting/alb/alb.go` and `utils/ingress/
ingress.go`. For each Ingress (`alb.ingress`, or every one of `alb.ingresses`), which must
have a rule whose backend is the action Service (`alb.rootService`, else the stable Service),
setting a weight writes two annotations and leaves everything else alone:

* `<prefix>/actions.<action Service>` (prefix `alb.annotationPrefix`, default
  `alb.ingress.kubernetes.io`): compact JSON `{"Type":"forward","ForwardConfig":
  {"TargetGroups":[{"ServiceName":CANARY,"ServicePort":"PORT","Weight":W},
  {"ServiceName":STABLE,"ServicePort":"PORT","Weight":100-W}]}}` (a weighted experiment's
  templates are target groups between canary and stable, each its Service at its weight,
  taken from the stable's: Argo's `getForwardActionString`), with
  `"TargetGroupStickinessConfig":{"Enabled":true,"DurationSeconds":N}` after the target
  groups when `alb.stickinessConfig.enabled` (N must be 1..604800);
* `rollouts.argoproj.io/managed-alb-annotations`: JSON `{ROLLOUT: [keys it manages]}`, merged
  with what other Rollouts recorded there.

A header route (`setHeaderRoute` with a `match`) writes, on each Ingress:

* `<prefix>/actions.<route>`: the forward action with one target group, the canary at weight
  100 (stickiness as above);
* `<prefix>/conditions.<route>`: compact JSON list `[{"field":"http-header",
  "httpHeaderConfig":{"httpHeaderName":H,"values":[V, ...]}}]`, one entry per header name, the
  `exact` values of the matches naming it gathered in order (ALB matches any of the values;
  a `prefix` or `regex` value is refused, where Argo would write an empty value);
* a path `/*` (`ImplementationSpecific`) whose backend is Service `<route>` on port name
  `use-annotation`, put first in every rule, then each rule's paths ordered as `managedRoutes`
  lists them (other paths after, in their order);
* both keys added to the managed-annotations record.

`setHeaderRoute` without a `match`, and `remove_managed_routes` (every `managedRoutes` entry,
at the end or on abort), delete those annotations, their record entries and the route's path.

What can be verified without AWS: `verify_weight` reads the annotation back and compares the
whole action. Argo goes further on AWS (with `--alb-verify-weight`): it reads the target
groups' weights from the load balancer's listener rules through the ELBv2 API, which needs
an AWS account.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any

from headway.cluster.protocol import Cluster
from headway.model.obj import Obj
from headway.rollout.plan import HeaderRoute, MirrorRoute
from headway.routers.control.objects import RolloutIdentity, read_object, replace_object
from headway.routers.control.reconciler import (
    TrafficRoutingError,
    WeightDestination,
    mirror_refused,
)

__all__ = [
    "DEFAULT_ALB_PREFIX",
    "MANAGED_ANNOTATIONS",
    "ALBReconciler",
    "forward_action",
    "header_conditions",
]

DEFAULT_ALB_PREFIX = "alb.ingress.kubernetes.io"
MANAGED_ANNOTATIONS = "rollouts.argoproj.io/managed-alb-annotations"
_MAX_STICKINESS_SECONDS = 604800


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def forward_action(
    *, groups: Sequence[tuple[str, int]], port: int, stickiness_seconds: int | None = None
) -> str:
    """The `actions.<svc>` JSON forwarding to `(Service, weight)` target groups, in order."""
    target_groups = [
        {"ServiceName": service, "ServicePort": str(port), "Weight": weight}
        for service, weight in groups
    ]
    config: dict[str, Any] = {"TargetGroups": target_groups}
    if stickiness_seconds is not None:
        if not 1 <= stickiness_seconds <= _MAX_STICKINESS_SECONDS:
            raise TrafficRoutingError(
                "trafficRouting.alb.stickinessConfig.durationSeconds must be between 1 and "
                f"{_MAX_STICKINESS_SECONDS} seconds (7 days)"
            )
        config["TargetGroupStickinessConfig"] = {
            "Enabled": True,
            "DurationSeconds": stickiness_seconds,
        }
    return _compact({"Type": "forward", "ForwardConfig": config})


def _has_rule_with_service(ingress: Obj, service: str) -> bool:
    for rule in (ingress.get("spec") or {}).get("rules") or []:
        for path in (rule.get("http") or {}).get("paths") or []:
            if ((path.get("backend") or {}).get("service") or {}).get("name") == service:
                return True
    return False


class ALBReconciler:
    type_name = "ALB"

    def __init__(
        self,
        cluster: Cluster,
        *,
        rollout: RolloutIdentity,
        ingresses: Sequence[str],
        stable_service: str,
        canary_service: str,
        service_port: int,
        root_service: str = "",
        annotation_prefix: str = DEFAULT_ALB_PREFIX,
        stickiness_seconds: int | None = None,
        managed_routes: Sequence[str] = (),
    ) -> None:
        self._cluster = cluster
        self._managed_routes = list(managed_routes)
        self._rollout = rollout
        self._ingresses = list(ingresses)
        self._stable = stable_service
        self._canary = canary_service
        self._port = service_port
        self._action_service = root_service or stable_service
        self._prefix = annotation_prefix or DEFAULT_ALB_PREFIX
        self._stickiness = stickiness_seconds

    @property
    def action_key(self) -> str:
        return f"{self._prefix}/actions.{self._action_service}"

    def desired_action(
        self, desired_weight: int, additional: Sequence[WeightDestination] = ()
    ) -> str:
        stable = 100 - desired_weight - sum(d.weight for d in additional)
        groups = (
            (self._canary, desired_weight),
            *((d.service_name, d.weight) for d in additional),
            (self._stable, stable),
        )
        return forward_action(groups=groups, port=self._port, stickiness_seconds=self._stickiness)

    def _read(self, name: str) -> Obj:
        ingress = read_object(
            self._cluster,
            api_version="networking.k8s.io/v1",
            kind="Ingress",
            name=name,
            namespace=self._rollout.namespace,
        )
        if not _has_rule_with_service(ingress, self._action_service):
            raise TrafficRoutingError(
                f"Ingress {name} does not have service '{self._action_service}' in rules"
            )
        return ingress

    def _managed(self, annotations: dict[str, str], keys: Sequence[str], *, add: bool) -> str:
        """The managed-annotations record with `keys` added to (or removed from) this Rollout's."""
        raw = annotations.get(MANAGED_ANNOTATIONS) or "{}"
        try:
            managed = json.loads(raw)
        except json.JSONDecodeError:
            raise TrafficRoutingError(f"annotation {MANAGED_ANNOTATIONS} is not JSON") from None
        recorded = list(managed.get(self._rollout.name) or [])
        for key in keys:
            if add and key not in recorded:
                recorded.append(key)
            elif not add:
                recorded = [k for k in recorded if k != key]
        managed[self._rollout.name] = recorded
        return _compact(dict(sorted(managed.items())))

    def update_hash(
        self, canary_hash: str, stable_hash: str, additional: Sequence[WeightDestination] = ()
    ) -> None:
        """Nothing to bind: this router routes by Service."""

    def set_weight(
        self, desired_weight: int, additional: Sequence[WeightDestination] = ()
    ) -> None:
        action = self.desired_action(desired_weight, additional)
        for name in self._ingresses:
            current = self._read(name)
            desired = copy.deepcopy(current)
            annotations = desired["metadata"].setdefault("annotations", {})
            annotations[self.action_key] = action
            annotations[MANAGED_ANNOTATIONS] = self._managed(
                annotations, [self.action_key], add=True
            )
            replace_object(self._cluster, current, desired)

    def verify_weight(
        self, desired_weight: int, additional: Sequence[WeightDestination] = ()
    ) -> bool | None:
        action = self.desired_action(desired_weight, additional)
        for name in self._ingresses:
            annotations = self._read(name)["metadata"].get("annotations") or {}
            if annotations.get(self.action_key) != action:
                return False
        return True

    # ---- header routes ----------------------------------------------------------------------

    def _route_keys(self, route: str) -> tuple[str, str]:
        return f"{self._prefix}/actions.{route}", f"{self._prefix}/conditions.{route}"

    def _edit_routes(self, *, routes: Sequence[str], add: HeaderRoute | None) -> None:
        """Write (`add`) or delete (`routes`) header-route annotations and paths on each Ingress."""
        for name in self._ingresses:
            current = self._read(name)
            desired = copy.deepcopy(current)
            annotations = desired["metadata"].setdefault("annotations", {})
            keys: list[str] = []
            for route in routes:
                action_key, condition_key = self._route_keys(route)
                keys += [action_key, condition_key]
                if add is None:
                    annotations.pop(action_key, None)
                    annotations.pop(condition_key, None)
                    _remove_path(desired, route)
                else:
                    annotations[action_key] = forward_action(
                        groups=[(self._canary, 100)],
                        port=self._port,
                        stickiness_seconds=self._stickiness,
                    )
                    annotations[condition_key] = header_conditions(add)
                    _insert_path(desired, route)
            annotations[MANAGED_ANNOTATIONS] = self._managed(annotations, keys, add=add is not None)
            _sort_paths(desired, self._managed_routes)
            if desired != current:
                replace_object(self._cluster, current, desired)

    def set_header_route(self, route: HeaderRoute) -> None:
        if route.match:
            self._edit_routes(routes=[route.name], add=route)
        else:
            self._edit_routes(routes=[route.name], add=None)

    def set_mirror_route(self, route: MirrorRoute) -> None:
        raise mirror_refused("ALB", route)

    def remove_managed_routes(self) -> None:
        """Delete the header routes of every `managedRoutes` entry, at the end or on abort."""
        if self._managed_routes:
            self._edit_routes(routes=self._managed_routes, add=None)


def header_conditions(route: HeaderRoute) -> str:
    """The `conditions.<route>` JSON: one http-header condition per header name, with the
    exact values of every match naming it (ALB matches a request carrying any of them)."""
    conditions: list[dict[str, Any]] = []
    by_header: dict[str, list[str]] = {}
    for match in route.match:
        header = str(match.get("headerName"))
        exact = (match.get("headerValue") or {}).get("exact")
        if not isinstance(exact, str):
            raise TrafficRoutingError(
                f"setHeaderRoute '{route.name}': header {header} needs an exact value through "
                "ALB (the load balancer's header conditions compare whole values)"
            )
        if header not in by_header:
            by_header[header] = []
            config = {"httpHeaderName": header, "values": by_header[header]}
            conditions.append({"field": "http-header", "httpHeaderConfig": config})
        by_header[header].append(exact)
    return _compact(conditions)


def _rule_paths(ingress: Obj) -> list[list[dict[str, Any]]]:
    rules = (ingress.get("spec") or {}).get("rules") or []
    return [rule["http"]["paths"] for rule in rules if (rule.get("http") or {}).get("paths")]


def _service_of(path: Mapping[str, Any]) -> str:
    return str(((path.get("backend") or {}).get("service") or {}).get("name") or "")


def _insert_path(ingress: Obj, route: str) -> None:
    """Put the route's `use-annotation` path first in every rule, unless one exists already."""
    if _has_rule_with_service(ingress, route):
        return
    for paths in _rule_paths(ingress):
        backend = {"service": {"name": route, "port": {"name": "use-annotation"}}}
        paths.insert(0, {"path": "/*", "pathType": "ImplementationSpecific", "backend": backend})


def _remove_path(ingress: Obj, route: str) -> None:
    """Drop the first path of each rule whose backend is the route's Service."""
    for paths in _rule_paths(ingress):
        index = next((i for i, p in enumerate(paths) if _service_of(p) == route), None)
        if index is not None:
            del paths[index]


def _sort_paths(ingress: Obj, managed_routes: Sequence[str]) -> None:
    """Order each rule's paths as `managedRoutes` lists their Services; others keep their order
    after them (a stable sort, as Argo's)."""
    rank = {name: index for index, name in enumerate(managed_routes)}
    for paths in _rule_paths(ingress):
        paths.sort(key=lambda p: rank.get(_service_of(p), len(rank)))
