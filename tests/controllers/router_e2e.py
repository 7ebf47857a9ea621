"""A routed canary of real processes on the local runtime, for router end-to-end tests.

Use: `async with running(tmp_path) as runtime:`, `apply(runtime, *ROUTED["smi"].objects,
*services(), rollout("v1", routing=...))`, `await healthy(runtime)`, then `rollout("v2", ...)`,
`await paused(runtime)`, `url = await address(runtime, ROUTED["smi"].routed)` and
`await versions(url, 40)` (a Counter per version). Add a router as one `Routed` in `ROUTED`.

Everything here builds objects or polls real conditions; the assertions stay in the tests.
"""

from __future__ import annotations

import asyncio
import sys
from collections import Counter
from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
from test_rollout_e2e import API, APP, _phase

from headway.clock import SystemClock
from headway.cluster.local.runtime import Runtime
from headway.controllers.manager import Manager
from headway.controllers.rollout.controller import RolloutController
from headway.controllers.rollout.experiments import ExperimentController
from headway.local_mesh.planes import RouterPlanes
from headway.model.obj import Obj
from polling import eventually, eventually_async
from routers.control.helpers import crd

__all__ = [
    "API",
    "ROUTED",
    "Routed",
    "address",
    "apply",
    "healthy",
    "ingress",
    "only_version",
    "paused",
    "rollout",
    "running",
    "services",
    "split_event",
    "status",
    "versions",
]

STANDARD_STEPS: list[dict[str, Any]] = [{"setWeight": 25}, {"pause": {}}]


@dataclass(frozen=True)
class Routed:
    """How a Rollout routes through one router: its `trafficRouting`, the objects the user
    writes beside it, and the (apiVersion, kind, name) whose mesh address serves the app."""

    routing: dict[str, Any]
    objects: tuple[Obj, ...]
    routed: tuple[str, str, str]


def ingress(service: str, port: dict[str, Any]) -> Obj:
    """Ingress `web` for host web.example, every path to `service` at `port`."""
    path = {
        "path": "/",
        "pathType": "Prefix",
        "backend": {"service": {"name": service, "port": port}},
    }
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"rules": [{"host": "web.example", "http": {"paths": [path]}}]},
    }


def _weighted_traefik_service() -> Obj:
    services = [{"name": "web-stable", "weight": 100}, {"name": "web-canary", "weight": 0}]
    return {
        "apiVersion": "traefik.io/v1alpha1",
        "kind": "TraefikService",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"weighted": {"services": services}},
    }


def _http_route() -> Obj:
    backends = [{"name": "web-stable", "port": 80}, {"name": "web-canary", "port": 80}]
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "HTTPRoute",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"rules": [{"backendRefs": backends}]},
    }


def _ambassador_mapping() -> Obj:
    return {
        "apiVersion": "getambassador.io/v2",
        "kind": "Mapping",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"prefix": "/", "service": "web-stable:80"},
    }


def _apisix_route() -> Obj:
    backends = [
        {"serviceName": "web-stable", "servicePort": 80},
        {"serviceName": "web-canary", "servicePort": 80},
    ]
    rule = {"name": "web", "match": {"paths": ["/*"]}, "backends": backends}
    return {
        "apiVersion": "apisix.apache.org/v2",
        "kind": "ApisixRoute",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"http": [rule]},
    }


def _app_mesh_objects() -> tuple[Obj, ...]:
    """App Mesh's CRDs, a VirtualService on a VirtualRouter, and the two VirtualNodes reached
    through the stable and canary Services (examples/appmesh of argo-rollouts)."""
    api = "appmesh.k8s.aws/v1beta2"

    def obj(kind: str, name: str, spec: dict[str, Any]) -> Obj:
        return {
            "apiVersion": api,
            "kind": kind,
            "metadata": {"name": name, "namespace": "default"},
            "spec": spec,
        }

    kinds = (
        ("VirtualService", "virtualservices"),
        ("VirtualRouter", "virtualrouters"),
        ("VirtualNode", "virtualnodes"),
    )
    targets = [
        {"virtualNodeRef": {"name": "web-canary"}, "weight": 0},
        {"virtualNodeRef": {"name": "web-stable"}, "weight": 100},
    ]
    route = {
        "name": "primary",
        "httpRoute": {"match": {"prefix": "/"}, "action": {"weightedTargets": targets}},
    }
    nodes = [
        obj(
            "VirtualNode",
            name,
            {
                "podSelector": {"matchLabels": {"app": "web"}},
                "serviceDiscovery": {"dns": {"hostname": f"{name}.default.svc.cluster.local"}},
            },
        )
        for name in ("web-stable", "web-canary")
    ]
    return (
        *(crd(group="appmesh.k8s.aws", kind=k, plural=p, versions=("v1beta2",)) for k, p in kinds),
        obj(
            "VirtualService",
            "web",
            {"provider": {"virtualRouter": {"virtualRouterRef": {"name": "web-router"}}}},
        ),
        obj("VirtualRouter", "web-router", {"routes": [route]}),
        *nodes,
    )


ROUTED: dict[str, Routed] = {
    "smi": Routed(
        routing={"smi": {"rootService": "web"}},
        objects=(
            crd(
                group="split.smi-spec.io",
                kind="TrafficSplit",
                plural="trafficsplits",
                versions=("v1alpha1",),
            ),
        ),
        routed=("split.smi-spec.io/v1alpha1", "TrafficSplit", "web"),
    ),
    "traefik": Routed(
        routing={"traefik": {"weightedTraefikServiceName": "web"}},
        objects=(
            crd(
                group="traefik.io",
                kind="TraefikService",
                plural="traefikservices",
                versions=("v1alpha1",),
            ),
            _weighted_traefik_service(),
        ),
        routed=("traefik.io/v1alpha1", "TraefikService", "web"),
    ),
    "gatewayapi": Routed(
        routing={"plugins": {"argoproj-labs/gatewayAPI": {"httpRoute": "web"}}},
        objects=(
            crd(
                group="gateway.networking.k8s.io",
                kind="HTTPRoute",
                plural="httproutes",
                versions=("v1",),
            ),
            _http_route(),
        ),
        routed=("gateway.networking.k8s.io/v1", "HTTPRoute", "web"),
    ),
    "alb": Routed(
        routing={"alb": {"ingress": "web", "servicePort": 80, "rootService": "web"}},
        objects=(ingress("web", {"name": "use-annotation"}),),
        routed=("networking.k8s.io/v1", "Ingress", "web"),
    ),
    "nginx": Routed(
        routing={"nginx": {"stableIngress": "web"}},
        objects=(ingress("web-stable", {"number": 80}),),
        routed=("networking.k8s.io/v1", "Ingress", "web"),
    ),
    "ambassador": Routed(
        routing={"ambassador": {"mappings": ["web"]}},
        objects=(
            crd(
                group="getambassador.io",
                kind="Mapping",
                plural="mappings",
                versions=("v2", "v3alpha1"),
            ),
            _ambassador_mapping(),
        ),
        routed=("getambassador.io/v2", "Mapping", "web"),
    ),
    "apisix": Routed(
        routing={"apisix": {"route": {"name": "web"}}},
        objects=(
            crd(
                group="apisix.apache.org",
                kind="ApisixRoute",
                plural="apisixroutes",
                versions=("v2",),
            ),
            _apisix_route(),
        ),
        routed=("apisix.apache.org/v2", "ApisixRoute", "web"),
    ),
    "appmesh": Routed(
        routing={
            "appMesh": {
                "virtualService": {"name": "web"},
                "virtualNodeGroup": {
                    "canaryVirtualNodeRef": {"name": "web-canary"},
                    "stableVirtualNodeRef": {"name": "web-stable"},
                },
            }
        },
        objects=_app_mesh_objects(),
        routed=("appmesh.k8s.aws/v1beta2", "VirtualService", "web"),
    ),
}


def services(*names: str) -> list[Obj]:
    """Services selecting the app's pods, port 80 -> 8080 (by default stable, canary, root)."""
    return [
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 8080}]},
        }
        for name in names or ("web-stable", "web-canary", "web")
    ]


def rollout(
    version: str,
    *,
    routing: dict[str, Any],
    steps: list[dict[str, Any]] | None = None,
    stable_service: str | None = "web-stable",
    canary_service: str | None = "web-canary",
) -> Obj:
    """Rollout `web` of 2 replicas of the demo app at `version` (it answers "<version> ...")
    routed by `routing`; `steps` default to setWeight 25 then an indefinite pause."""
    container = {
        "name": "app",
        "image": f"headway-demo/app:{version}",
        "ports": [{"containerPort": 8080}],
        "readinessProbe": {"httpGet": {"path": "/readyz", "port": 8080}, "periodSeconds": 1},
    }
    canary: dict[str, Any] = {
        "trafficRouting": routing,
        "scaleDownDelaySeconds": 0,
        "steps": steps if steps is not None else STANDARD_STEPS,
    }
    if stable_service is not None:
        canary["stableService"] = stable_service
    if canary_service is not None:
        canary["canaryService"] = canary_service
    return {
        "apiVersion": API,
        "kind": "Rollout",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"terminationGracePeriodSeconds": 2, "containers": [container]},
            },
            "strategy": {"canary": canary},
        },
    }


@asynccontextmanager
async def running(tmp_path: Path, *, experiments: bool = False) -> AsyncIterator[Runtime]:
    """The local runtime (with the router data planes) and a manager running the Rollout
    controller (and with `experiments` the Experiment controller), both stopped on exit. The
    demo app's image runs `examples/app/server.py`."""
    config = tmp_path / "headway-runtime.yaml"
    config.write_text(
        f"images:\n  headway-demo/app:\n    command: [{sys.executable!r}, {str(APP)!r}]\n"
        "    versionFromTag: true\n"
    )
    clock = SystemClock()
    runtime = Runtime(
        state_dir=tmp_path,
        clock=clock,
        config_path=config,
        shutdown_grace_seconds=3.0,
        data_planes=RouterPlanes(),
    )
    manager = Manager(runtime.cluster, clock)
    manager.register(RolloutController(runtime.cluster, clock))
    if experiments:
        manager.register(ExperimentController(runtime.cluster, clock))
    stop = asyncio.Event()
    tasks = [asyncio.create_task(runtime.run(stop)), asyncio.create_task(manager.run(stop))]
    try:
        yield runtime
    finally:
        stop.set()
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=20)


def apply(runtime: Runtime, *objects: Obj) -> None:
    for obj in objects:
        runtime.cluster.apply(obj, field_manager="test")


def status(runtime: Runtime) -> dict[str, Any]:
    return dict(runtime.cluster.get(API, "Rollout", "web", "default").get("status") or {})


async def healthy(runtime: Runtime, what: str = "Healthy") -> None:
    """The Rollout is Healthy at its latest generation."""
    await eventually(lambda: _phase(runtime) == "Healthy", timeout=25, what=what)


async def paused(runtime: Runtime, what: str = "paused") -> None:
    """The Rollout holds a pause condition (it reached a `pause: {}` step)."""
    await eventually(lambda: status(runtime).get("pauseConditions"), timeout=25, what=what)


def _annotated_address(runtime: Runtime, routed: tuple[str, str, str]) -> str | None:
    try:
        obj = runtime.cluster.get(*routed, "default")
    except Exception:  # not created yet (SMI: the controller creates the TrafficSplit)
        return None
    return (obj["metadata"].get("annotations") or {}).get("headway.dev/address")


async def address(runtime: Runtime, routed: tuple[str, str, str]) -> str:
    """host:port where the local mesh serves the routed object (its headway.dev/address)."""
    found: str = await eventually(
        lambda: _annotated_address(runtime, routed), timeout=10, what="mesh address"
    )
    return found


def split_event(runtime: Runtime, name: str, backend: str, weight: int) -> bool:
    """The mesh recorded a TrafficSplit Event for `name` giving `backend` `weight` percent."""
    return any(
        (e.get("involvedObject") or {}).get("name") == name
        and e.get("reason") == "TrafficSplit"
        and str(e.get("message", "")).endswith(f"{backend} {weight}%")
        for e in runtime.cluster.list("v1", "Event", namespace="default")
    )


async def versions(
    address: str, count: int, headers: Mapping[str, str] | None = None
) -> Counter[str]:
    """`count` real requests to `address`, counted by the version that answered ("error" for
    any non-200 answer)."""
    seen: Counter[str] = Counter()
    async with httpx2.AsyncClient(timeout=5) as client:
        for _ in range(count):
            response = await client.get(f"http://{address}/", headers=dict(headers or {}))
            seen[response.text.split()[0] if response.status_code == 200 else "error"] += 1
    return seen


async def only_version(
    address: str, version: str, *, headers: Iterable[Mapping[str, str]] = ({},)
) -> None:
    """Within a deadline, 8 consecutive real requests with each of `headers` are all answered
    by `version` (Service selectors and the mesh's endpoints follow a step after the status,
    and an older TrafficSplit Event at the same weight may exist, so this judges traffic)."""
    header_sets = list(headers)

    async def only() -> bool:
        for header_set in header_sets:
            if await versions(address, 8, header_set) != Counter({version: 8}):
                return False
        return True

    await eventually_async(only, timeout=20, what=f"every request answered by {version}")
