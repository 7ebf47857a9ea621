"""AWS ALB traffic routing: the load balancer controller's action annotation, as Argo writes it.

Checked against argo-rollouts `rollout/trafficrouting/alb/alb.go` and `utils/ingress/
ingress.go`. For each Ingress (`alb.ingress`, or every one of `alb.ingresses`), which must
have a rule whose backend is the action Service (`alb.rootService`, else the stable Service),
setting a weight writes two annotations and leaves everything else alone:

* `<prefix>/actions.<action Service>` (prefix `alb.annotationPrefix`, default
  `alb.ingress.kubernetes.io`): compact JSON `{"Type":"forward","ForwardConfig":
  {"TargetGroups":[{"ServiceName":CANARY,"ServicePort":"PORT","Weight":W},
  {"ServiceName":STABLE,"ServicePort":"PORT","Weight":100-W}]}}`, with
  `"TargetGroupStickinessConfig":{"Enabled":true,"DurationSeconds":N}` after the target
  groups when `alb.stickinessConfig.enabled` (N must be 1..604800);
* `rollouts.argoproj.io/managed-alb-annotations`: JSON `{ROLLOUT: [keys it manages]}`, merged
  with what other Rollouts recorded there.

What can be verified without AWS: `verify_weight` reads the annotation back and compares the
whole action. Argo goes further on AWS (with `--alb-verify-weight`): it reads the target
groups' weights from the load balancer's listener rules through the ELBv2 API, which needs
an AWS account. Header routes (action plus `conditions.<route>` annotations and an extra
Ingress path) are not written by Headway yet; `setHeaderRoute` is refused.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from typing import Any

from headway.cluster.protocol import Cluster
from headway.model.obj import Obj
from headway.rollout.plan import HeaderRoute
from headway.routers.control.objects import RolloutIdentity, read_object, replace_object
from headway.routers.control.reconciler import TrafficRoutingError

__all__ = ["DEFAULT_ALB_PREFIX", "MANAGED_ANNOTATIONS", "ALBReconciler", "forward_action"]

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
    ) -> None:
        self._cluster = cluster
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

    def desired_action(self, desired_weight: int) -> str:
        groups = ((self._canary, desired_weight), (self._stable, 100 - desired_weight))
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

    def _managed(self, annotations: dict[str, str]) -> str:
        raw = annotations.get(MANAGED_ANNOTATIONS) or "{}"
        try:
            managed = json.loads(raw)
        except json.JSONDecodeError:
            raise TrafficRoutingError(f"annotation {MANAGED_ANNOTATIONS} is not JSON") from None
        keys = list(managed.get(self._rollout.name) or [])
        if self.action_key not in keys:
            keys.append(self.action_key)
        managed[self._rollout.name] = keys
        return _compact(dict(sorted(managed.items())))

    def update_hash(self, canary_hash: str, stable_hash: str) -> None:
        """Nothing to bind: this router routes by Service."""

    def set_weight(self, desired_weight: int) -> None:
        action = self.desired_action(desired_weight)
        for name in self._ingresses:
            current = self._read(name)
            desired = copy.deepcopy(current)
            annotations = desired["metadata"].setdefault("annotations", {})
            annotations[self.action_key] = action
            annotations[MANAGED_ANNOTATIONS] = self._managed(annotations)
            replace_object(self._cluster, current, desired)

    def verify_weight(self, desired_weight: int) -> bool | None:
        action = self.desired_action(desired_weight)
        for name in self._ingresses:
            annotations = self._read(name)["metadata"].get("annotations") or {}
            if annotations.get(self.action_key) != action:
                return False
        return True

    def set_header_route(self, route: HeaderRoute) -> None:
        raise TrafficRoutingError(
            f"setHeaderRoute '{route.name}': header routes through ALB are not supported by "
            "Headway yet"
        )

    def remove_managed_routes(self) -> None:
        """No header routes are written through ALB yet: nothing to remove."""
