"""End to end: a canary through SMI, Traefik, Gateway API, ALB, NGINX, Ambassador, APISIX and
App Mesh splits real traffic.

For each router, the objects are written by its control-plane reconciler (the module the
Rollout controller uses), the local mesh realizes them with a real data-plane router, and real
requests through it land on the two versions in exactly the written proportion. An abort
(weight 0) sends every request back to the stable version.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from cluster.local_mesh.harness import CANARY, STABLE, deploy_two_versions, versions
from cluster.local_mesh.harness import mesh_runtime as running
from headway.cluster.local.mesh.gateways import ADDRESS_ANNOTATION
from headway.cluster.local.runtime import Runtime
from headway.cluster.protocol import Cluster
from headway.kube.pod_facts import is_ready
from headway.model.obj import Obj
from headway.routers.control.alb import ALBReconciler
from headway.routers.control.ambassador import AmbassadorReconciler
from headway.routers.control.apisix import ApisixReconciler
from headway.routers.control.appmesh import AppMeshReconciler
from headway.routers.control.gateway_api import GatewayAPIReconciler
from headway.routers.control.nginx import NginxReconciler
from headway.routers.control.objects import RolloutIdentity
from headway.routers.control.reconciler import TrafficRoutingReconciler
from headway.routers.control.smi import SMIReconciler
from headway.routers.control.traefik import TraefikReconciler
from polling import eventually, eventually_async
from routers.control.helpers import crd

pytestmark = pytest.mark.slow

ROLES = {"stableService": STABLE, "canaryService": CANARY}


def _ingress(name: str, service: str, port: dict[str, Any]) -> Obj:
    backend = {"service": {"name": service, "port": port}}
    path = {"path": "/", "pathType": "Prefix", "backend": backend}
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"rules": [{"host": "checkout.example", "http": {"paths": [path]}}]},
    }


@dataclass(frozen=True)
class Case:
    """One router: its Rollout block, what the user writes, its reconciler, the routed object."""

    routing: dict[str, Any]
    crds: tuple[Obj, ...]
    user_objects: tuple[Obj, ...]
    reconciler: Callable[[Cluster, RolloutIdentity], TrafficRoutingReconciler]
    routed: tuple[str, str, str]  # apiVersion, kind, name: where the router's address goes
    written: Callable[[Cluster], Any]  # the fields that carry the weight, as written
    after_abort: Any  # their exact value once the weight is back to 0


SMI = Case(
    routing={"smi": {"rootService": "checkout"}},
    crds=(crd(group="split.smi-spec.io", kind="TrafficSplit", plural="trafficsplits",
              versions=("v1alpha1",)),),
    user_objects=(),
    reconciler=lambda c, r: SMIReconciler(c, rollout=r, stable_service=STABLE,
                                          canary_service=CANARY, root_service="checkout"),
    routed=("split.smi-spec.io/v1alpha1", "TrafficSplit", "checkout"),
    written=lambda c: c.get("split.smi-spec.io/v1alpha1", "TrafficSplit", "checkout",
                            "default")["spec"],
    after_abort={"service": "checkout", "backends": [{"service": CANARY, "weight": "0"},
                                                     {"service": STABLE, "weight": "100"}]},
)
TRAEFIK = Case(
    routing={"traefik": {"weightedTraefikServiceName": "checkout-weighted"}},
    crds=(crd(group="traefik.io", kind="TraefikService", plural="traefikservices",
              versions=("v1alpha1",)),),
    user_objects=({
        "apiVersion": "traefik.io/v1alpha1",
        "kind": "TraefikService",
        "metadata": {"name": "checkout-weighted", "namespace": "default"},
        "spec": {"weighted": {"services": [{"name": STABLE, "port": 80, "weight": 100},
                                           {"name": CANARY, "port": 80, "weight": 0}]}},
    },),
    reconciler=lambda c, r: TraefikReconciler(c, namespace="default",
                                              traefik_service="checkout-weighted",
                                              stable_service=STABLE, canary_service=CANARY),
    routed=("traefik.io/v1alpha1", "TraefikService", "checkout-weighted"),
    written=lambda c: c.get("traefik.io/v1alpha1", "TraefikService", "checkout-weighted",
                            "default")["spec"],
    after_abort={"weighted": {"services": [{"name": STABLE, "port": 80, "weight": 100},
                                           {"name": CANARY, "port": 80, "weight": 0}]}},
)
GATEWAY = Case(
    routing={"plugins": {"argoproj-labs/gatewayAPI": {"httpRoute": "checkout"}}},
    crds=(crd(group="gateway.networking.k8s.io", kind="HTTPRoute", plural="httproutes",
              versions=("v1",)),),
    user_objects=({
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "HTTPRoute",
        "metadata": {"name": "checkout", "namespace": "default"},
        "spec": {"rules": [{"backendRefs": [{"name": STABLE, "port": 80, "weight": 100},
                                            {"name": CANARY, "port": 80, "weight": 0}]}]},
    },),
    reconciler=lambda c, r: GatewayAPIReconciler(c, namespace="default", http_routes=["checkout"],
                                                 stable_service=STABLE, canary_service=CANARY),
    routed=("gateway.networking.k8s.io/v1", "HTTPRoute", "checkout"),
    written=lambda c: c.get("gateway.networking.k8s.io/v1", "HTTPRoute", "checkout",
                            "default")["spec"]["rules"],
    after_abort=[{"backendRefs": [{"name": STABLE, "port": 80, "weight": 100},
                                  {"name": CANARY, "port": 80, "weight": 0}]}],
)
ALB = Case(
    routing={"alb": {"ingress": "checkout", "servicePort": 80, "rootService": "checkout"}},
    crds=(),
    user_objects=(_ingress("checkout", "checkout", {"name": "use-annotation"}),),
    reconciler=lambda c, r: ALBReconciler(c, rollout=r, ingresses=["checkout"],
                                          stable_service=STABLE, canary_service=CANARY,
                                          service_port=80, root_service="checkout"),
    routed=("networking.k8s.io/v1", "Ingress", "checkout"),
    written=lambda c: c.get("networking.k8s.io/v1", "Ingress", "checkout", "default")[
        "metadata"]["annotations"]["alb.ingress.kubernetes.io/actions.checkout"],
    after_abort=(
        '{"Type":"forward","ForwardConfig":{"TargetGroups":['
        f'{{"ServiceName":"{CANARY}","ServicePort":"80","Weight":0}},'
        f'{{"ServiceName":"{STABLE}","ServicePort":"80","Weight":100}}]}}}}'
    ),
)
NGINX = Case(
    routing={"nginx": {"stableIngress": "checkout"}},
    crds=(),
    user_objects=(_ingress("checkout", STABLE, {"number": 80}),),
    reconciler=lambda c, r: NginxReconciler(c, rollout=r, stable_ingresses=["checkout"],
                                            stable_service=STABLE, canary_service=CANARY),
    routed=("networking.k8s.io/v1", "Ingress", "checkout"),
    written=lambda c: {
        k: v
        for k, v in c.get("networking.k8s.io/v1", "Ingress", "checkout-checkout-canary",
                          "default")["metadata"]["annotations"].items()
        if k.startswith("nginx.")
    },
    after_abort={"nginx.ingress.kubernetes.io/canary": "true",
                 "nginx.ingress.kubernetes.io/canary-weight": "0"},
)

AMBASSADOR = Case(
    routing={"ambassador": {"mappings": ["checkout"]}},
    crds=(crd(group="getambassador.io", kind="Mapping", plural="mappings",
              versions=("v2", "v3alpha1")),),
    user_objects=({
        "apiVersion": "getambassador.io/v3alpha1",  # read by the reconciler as v2, as on a cluster
        "kind": "Mapping",
        "metadata": {"name": "checkout", "namespace": "default"},
        "spec": {"prefix": "/", "service": f"{STABLE}:80"},
    },),
    reconciler=lambda c, r: AmbassadorReconciler(c, rollout=r, mappings=["checkout"],
                                                 stable_service=STABLE, canary_service=CANARY),
    routed=("getambassador.io/v2", "Mapping", "checkout"),
    written=lambda c: sorted(
        m["metadata"]["name"] for m in c.list("getambassador.io/v2", "Mapping", namespace="default")
    ),
    after_abort=["checkout"],  # the canary Mapping is deleted at weight 0
)
APISIX = Case(
    routing={"apisix": {"route": {"name": "checkout"}}},
    crds=(crd(group="apisix.apache.org", kind="ApisixRoute", plural="apisixroutes",
              versions=("v2",)),),
    user_objects=({
        "apiVersion": "apisix.apache.org/v2",
        "kind": "ApisixRoute",
        "metadata": {"name": "checkout", "namespace": "default"},
        "spec": {"http": [{"name": "checkout", "match": {"paths": ["/*"]},
                           "backends": [{"serviceName": STABLE, "servicePort": 80},
                                        {"serviceName": CANARY, "servicePort": 80}]}]},
    },),
    reconciler=lambda c, r: ApisixReconciler(c, rollout=r, route="checkout", rules=(),
                                             stable_service=STABLE, canary_service=CANARY,
                                             managed_routes=()),
    routed=("apisix.apache.org/v2", "ApisixRoute", "checkout"),
    written=lambda c: c.get("apisix.apache.org/v2", "ApisixRoute", "checkout",
                            "default")["spec"]["http"][0]["backends"],
    after_abort=[{"serviceName": STABLE, "servicePort": 80, "weight": 100},
                 {"serviceName": CANARY, "servicePort": 80, "weight": 0}],
)
_MESH_API = "appmesh.k8s.aws/v1beta2"


def _mesh_object(kind: str, name: str, spec: dict[str, Any]) -> Obj:
    return {"apiVersion": _MESH_API, "kind": kind,
            "metadata": {"name": name, "namespace": "default"}, "spec": spec}


APP_MESH = Case(
    routing={"appMesh": {"virtualService": {"name": "checkout"},
                         "virtualNodeGroup": {"canaryVirtualNodeRef": {"name": "canary-vn"},
                                              "stableVirtualNodeRef": {"name": "stable-vn"}}}},
    crds=tuple(crd(group="appmesh.k8s.aws", kind=kind, plural=f"{kind.lower()}s",
                   versions=("v1beta2",))
               for kind in ("VirtualService", "VirtualRouter", "VirtualNode")),
    user_objects=(
        _mesh_object("VirtualService", "checkout",
                     {"provider": {"virtualRouter": {"virtualRouterRef": {"name": "router"}}}}),
        _mesh_object("VirtualRouter", "router", {"routes": [{"name": "primary", "httpRoute": {
            "action": {"weightedTargets": [{"virtualNodeRef": {"name": "stable-vn"}, "weight": 100},
                                           {"virtualNodeRef": {"name": "canary-vn"}, "weight": 0}]},
        }}]}),
        *(_mesh_object("VirtualNode", node, {"serviceDiscovery": {"dns": {"hostname": service}}})
          for node, service in (("stable-vn", STABLE), ("canary-vn", CANARY))),
    ),
    reconciler=lambda c, r: AppMeshReconciler(c, rollout=r, virtual_service="checkout", routes=(),
                                              stable_node="stable-vn", canary_node="canary-vn"),
    routed=(_MESH_API, "VirtualService", "checkout"),
    written=lambda c: c.get(_MESH_API, "VirtualRouter", "router", "default")["spec"]["routes"][0][
        "httpRoute"]["action"]["weightedTargets"],
    after_abort=[{"virtualNodeRef": {"name": "stable-vn"}, "weight": 100},
                 {"virtualNodeRef": {"name": "canary-vn"}, "weight": 0}],
)


def _store_rollout(runtime: Runtime, routing: dict[str, Any]) -> RolloutIdentity:
    rollout = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Rollout",
        "metadata": {"name": "checkout", "namespace": "default"},
        "spec": {"strategy": {"canary": {**ROLES, "trafficRouting": routing}}},
    }
    stored = runtime.cluster.apply(rollout, field_manager="test")
    return RolloutIdentity(name="checkout", namespace="default", uid=stored["metadata"]["uid"])


def _split_event(runtime: Runtime, name: str, weight: int) -> bool:
    """Whether the mesh announced the routed object's router serving `weight` to the canary."""
    events = runtime.cluster.list("v1", "Event", namespace="default")
    wanted = f"{CANARY} {weight}%"
    return any(
        (e.get("involvedObject") or {}).get("name") == name
        and e.get("reason") == "TrafficSplit"
        and str(e.get("message", "")).endswith(wanted)
        for e in events
    )


def _both_versions_ready(runtime: Runtime) -> bool:
    pods = runtime.cluster.list("v1", "Pod", namespace="default")
    ready = {p["metadata"]["labels"].get("app") for p in pods if is_ready(p)}
    return {STABLE, CANARY} <= ready


def _address(runtime: Runtime, case: Case) -> str:
    obj = runtime.cluster.get(*case.routed, "default")
    return str((obj["metadata"].get("annotations") or {}).get(ADDRESS_ANNOTATION) or "")


@pytest.mark.parametrize(
    "case",
    [SMI, TRAEFIK, GATEWAY, ALB, NGINX, AMBASSADOR, APISIX, APP_MESH],
    ids=["smi", "traefik", "gatewayapi", "alb", "nginx", "ambassador", "apisix", "appmesh"],
)
async def test_canary_then_abort_splits_real_traffic(tmp_path: Path, case: Case) -> None:
    async with running(tmp_path) as runtime:
        for obj in (*case.crds, *case.user_objects):
            runtime.cluster.apply(obj, field_manager="git")
        deploy_two_versions(runtime)
        await eventually(lambda: _both_versions_ready(runtime), timeout=30, what="ready pods")
        router = case.reconciler(runtime.cluster, _store_rollout(runtime, case.routing))
        name = case.routed[2]

        router.set_weight(30)
        await eventually(lambda: _split_event(runtime, name, 30), timeout=30,
                         what="the mesh to serve 30% to the canary")
        assert router.verify_weight(30) is True
        assert await versions(_address(runtime, case), 100) == {"200 v1": 70, "200 v2": 30}

        router.set_weight(0)  # the abort
        # An Event for 0 % may predate the canary (a user object written at 0), so the abort
        # is awaited on real traffic: 8 requests in a row answered by the stable version.
        address = _address(runtime, case)

        async def only_stable() -> bool:
            return await versions(address, 8) == {"200 v1": 8}

        await eventually_async(only_stable, timeout=30, what="every request back on stable")
        assert await versions(_address(runtime, case), 50) == {"200 v1": 50}
        assert case.written(runtime.cluster) == case.after_abort
