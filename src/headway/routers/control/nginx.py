"""NGINX Ingress traffic routing: the canary Ingress Argo Rollouts creates beside the stable one.

Checked against argo-rollouts `rollout/trafficrouting/nginx/nginx.go` and `utils/ingress/
ingress.go`. For each stable Ingress (`nginx.stableIngress`, or every one of
`nginx.stableIngresses`) the Rollout owns a canary Ingress named `<rollout>-<ingress>-canary`
(the prefix cut to fit 253 characters) in its namespace. It is built from the stable Ingress:

* `spec.rules`: a copy of each rule that has a path whose backend is the stable Service, with
  those backends pointed at the canary Service (no such rule at all is an error);
  `spec.tls` and `spec.ingressClassName` copied when set;
* annotations: `kubernetes.io/ingress.class` copied when set; each
  `additionalIngressAnnotations` entry, its key put under the prefix
  (`nginx.annotationPrefix`, default `nginx.ingress.kubernetes.io`) unless it already starts
  with it; each `canaryIngressAnnotations` entry as written; then `<prefix>/canary: "true"`,
  `<prefix>/canary-weight: "W"`, and `<prefix>/canary-weight-total` when
  `trafficRouting.maxTrafficWeight` is set.

An existing canary Ingress keeps the annotations it has that the desired one does not name;
one the Rollout does not own is refused. Header routing is NGINX's own `canary-by-header`
annotations through `additionalIngressAnnotations`: a `setHeaderRoute` step is refused (Argo
ignores it; validation rejects it first). `verify_weight` reads the canary Ingress back.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from headway.cluster.protocol import Cluster
from headway.model.obj import Obj
from headway.rollout.plan import HeaderRoute, MirrorRoute
from headway.routers.control.objects import (
    RolloutIdentity,
    create_object,
    read_object,
    read_object_or_none,
    replace_object,
)
from headway.routers.control.reconciler import (
    TrafficRoutingError,
    WeightDestination,
    mirror_refused,
    refuse_additional,
)

__all__ = ["DEFAULT_ANNOTATION_PREFIX", "INGRESS_API", "NginxReconciler", "canary_ingress_name"]

INGRESS_API = "networking.k8s.io/v1"
DEFAULT_ANNOTATION_PREFIX = "nginx.ingress.kubernetes.io"
_CANARY_SUFFIX = "-canary"
_CLASS_ANNOTATION = "kubernetes.io/ingress.class"


def canary_ingress_name(rollout: str, stable_ingress: str) -> str:
    """`<rollout>-<stable ingress>-canary`, the prefix cut so the name fits 253 characters."""
    prefix = f"{rollout}-{stable_ingress}"[: 253 - len(_CANARY_SUFFIX)]
    return prefix + _CANARY_SUFFIX


class NginxReconciler:
    type_name = "Nginx"

    def __init__(
        self,
        cluster: Cluster,
        *,
        rollout: RolloutIdentity,
        stable_ingresses: Sequence[str],
        stable_service: str,
        canary_service: str,
        annotation_prefix: str = DEFAULT_ANNOTATION_PREFIX,
        additional_annotations: Mapping[str, str] | None = None,
        canary_annotations: Mapping[str, str] | None = None,
        max_traffic_weight: int | None = None,
    ) -> None:
        self._cluster = cluster
        self._rollout = rollout
        self._stable_ingresses = list(stable_ingresses)
        self._stable = stable_service
        self._canary = canary_service
        self._prefix = annotation_prefix or DEFAULT_ANNOTATION_PREFIX
        self._additional = dict(additional_annotations or {})
        self._canary_annotations = dict(canary_annotations or {})
        self._max_weight = max_traffic_weight

    # ---- the canary Ingress ------------------------------------------------------------------

    def _canary_rules(self, stable_ingress: Obj) -> list[dict[str, Any]]:
        rules = []
        for rule in (stable_ingress.get("spec") or {}).get("rules") or []:
            copied = copy.deepcopy(rule)
            paths = (copied.get("http") or {}).get("paths") or []
            backends = [((p.get("backend") or {}).get("service") or {}) for p in paths]
            stable_backends = [b for b in backends if b.get("name") == self._stable]
            for backend in stable_backends:
                backend["name"] = self._canary
            if stable_backends:
                rules.append(copied)
        return rules

    def _annotations(self, stable_ingress: Obj, desired_weight: int) -> dict[str, str]:
        stable_annotations = (stable_ingress.get("metadata") or {}).get("annotations") or {}
        annotations: dict[str, str] = {}
        if _CLASS_ANNOTATION in stable_annotations:
            annotations[_CLASS_ANNOTATION] = stable_annotations[_CLASS_ANNOTATION]
        for key, value in self._additional.items():
            prefixed = key if key.startswith(self._prefix) else f"{self._prefix}/{key}"
            annotations[prefixed] = value
        annotations.update(self._canary_annotations)
        annotations[f"{self._prefix}/canary"] = "true"
        annotations[f"{self._prefix}/canary-weight"] = str(desired_weight)
        if self._max_weight is not None:
            annotations[f"{self._prefix}/canary-weight-total"] = str(self._max_weight)
        return annotations

    def desired_canary_ingress(self, stable_ingress: Obj, desired_weight: int) -> Obj:
        """The canary Ingress for `stable_ingress` at `desired_weight`."""
        stable_name = str(stable_ingress["metadata"]["name"])
        rules = self._canary_rules(stable_ingress)
        if not rules:
            raise TrafficRoutingError(
                f"ingress '{stable_name}' has no rules using service {self._stable} backend"
            )
        stable_spec = stable_ingress.get("spec") or {}
        spec: dict[str, Any] = {"rules": rules}
        if stable_spec.get("tls") is not None:
            spec["tls"] = copy.deepcopy(stable_spec["tls"])
        if stable_spec.get("ingressClassName") is not None:
            spec["ingressClassName"] = stable_spec["ingressClassName"]
        metadata = {
            "name": canary_ingress_name(self._rollout.name, stable_name),
            "namespace": self._rollout.namespace,
            "annotations": self._annotations(stable_ingress, desired_weight),
            "ownerReferences": [self._rollout.owner_reference()],
        }
        return {"apiVersion": INGRESS_API, "kind": "Ingress", "metadata": metadata, "spec": spec}

    def _read_stable(self, name: str) -> Obj:
        return read_object(
            self._cluster,
            api_version=INGRESS_API,
            kind="Ingress",
            name=name,
            namespace=self._rollout.namespace,
        )

    def _read_canary(self, name: str) -> Obj | None:
        return read_object_or_none(
            self._cluster,
            api_version=INGRESS_API,
            kind="Ingress",
            name=name,
            namespace=self._rollout.namespace,
        )

    def _set_weight_for(self, stable_name: str, desired_weight: int) -> None:
        stable_ingress = self._read_stable(stable_name)
        desired = self.desired_canary_ingress(stable_ingress, desired_weight)
        current = self._read_canary(desired["metadata"]["name"])
        if current is None:
            create_object(self._cluster, desired)
            return
        if not self._rollout.owns(current):
            raise TrafficRoutingError(
                f"canary ingress '{desired['metadata']['name']}' controlled by different object"
            )
        metadata = dict(current["metadata"])
        kept = dict(metadata.get("annotations") or {})
        metadata["annotations"] = {**kept, **desired["metadata"]["annotations"]}
        replace_object(
            self._cluster, current, {**current, "metadata": metadata, "spec": desired["spec"]}
        )

    # ---- the protocol -----------------------------------------------------------------------

    def update_hash(
        self, canary_hash: str, stable_hash: str, additional: Sequence[WeightDestination] = ()
    ) -> None:
        """Nothing to bind: this router routes by Service."""

    def set_weight(
        self, desired_weight: int, additional: Sequence[WeightDestination] = ()
    ) -> None:
        refuse_additional("NGINX", additional)  # a split it cannot make must fail
        for stable_name in self._stable_ingresses:
            self._set_weight_for(stable_name, desired_weight)

    def verify_weight(
        self, desired_weight: int, additional: Sequence[WeightDestination] = ()
    ) -> bool | None:
        key = f"{self._prefix}/canary-weight"
        for stable_name in self._stable_ingresses:
            name = canary_ingress_name(self._rollout.name, stable_name)
            current = self._read_canary(name)
            annotations = ((current or {}).get("metadata") or {}).get("annotations") or {}
            if annotations.get(key) != str(desired_weight):
                return False
        return True

    def set_header_route(self, route: HeaderRoute) -> None:
        raise TrafficRoutingError(
            f"setHeaderRoute '{route.name}': the NGINX router has no managed header routes; "
            "use canary-by-header in additionalIngressAnnotations"
        )

    def set_mirror_route(self, route: MirrorRoute) -> None:
        raise mirror_refused("NGINX", route)

    def remove_managed_routes(self) -> None:
        """NGINX has no managed routes: nothing to remove."""
