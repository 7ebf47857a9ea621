"""End to end through the Rollout controller: a canary routed by SMI, Traefik, the Gateway API
plugin, ALB or NGINX pauses at 25 % with real traffic split 30/10, then an abort sends every
request back to v1. The controller picks the reconciler from the Rollout's trafficRouting;
the local mesh realizes what it writes."""

from __future__ import annotations

import asyncio
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import httpx2
import pytest
from test_rollout_e2e import API, APP, _phase

from headway.clock import SystemClock
from headway.cluster.local.runtime import Runtime
from headway.controllers.manager import Manager
from headway.controllers.rollout.controller import RolloutController
from headway.local_mesh.planes import RouterPlanes
from headway.model.obj import Obj
from headway.steering import rollouts as rollouts_actions
from polling import eventually, eventually_async
from routers.control.helpers import crd

pytestmark = pytest.mark.slow


def _ingress(service: str, port: dict[str, Any]) -> Obj:
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


# router -> (trafficRouting, objects the user writes, (apiVersion, kind, name) routed)
CASES: dict[str, tuple[dict[str, Any], list[Obj], tuple[str, str, str]]] = {
    "smi": (
        {"smi": {"rootService": "web"}},
        [
            crd(
                group="split.smi-spec.io",
                kind="TrafficSplit",
                plural="trafficsplits",
                versions=("v1alpha1",),
            )
        ],
        ("split.smi-spec.io/v1alpha1", "TrafficSplit", "web"),
    ),
    "traefik": (
        {"traefik": {"weightedTraefikServiceName": "web"}},
        [
            crd(
                group="traefik.io",
                kind="TraefikService",
                plural="traefikservices",
                versions=("v1alpha1",),
            ),
            {
                "apiVersion": "traefik.io/v1alpha1",
                "kind": "TraefikService",
                "metadata": {"name": "web", "namespace": "default"},
                "spec": {
                    "weighted": {
                        "services": [
                            {"name": "web-stable", "weight": 100},
                            {"name": "web-canary", "weight": 0},
                        ]
                    }
                },
            },
        ],
        ("traefik.io/v1alpha1", "TraefikService", "web"),
    ),
    "gatewayapi": (
        {"plugins": {"argoproj-labs/gatewayAPI": {"httpRoute": "web"}}},
        [
            crd(
                group="gateway.networking.k8s.io",
                kind="HTTPRoute",
                plural="httproutes",
                versions=("v1",),
            ),
            {
                "apiVersion": "gateway.networking.k8s.io/v1",
                "kind": "HTTPRoute",
                "metadata": {"name": "web", "namespace": "default"},
                "spec": {
                    "rules": [
                        {
                            "backendRefs": [
                                {"name": "web-stable", "port": 80},
                                {"name": "web-canary", "port": 80},
                            ]
                        }
                    ]
                },
            },
        ],
        ("gateway.networking.k8s.io/v1", "HTTPRoute", "web"),
    ),
    "alb": (
        {"alb": {"ingress": "web", "servicePort": 80, "rootService": "web"}},
        [_ingress("web", {"name": "use-annotation"})],
        ("networking.k8s.io/v1", "Ingress", "web"),
    ),
    "nginx": (
        {"nginx": {"stableIngress": "web"}},
        [_ingress("web-stable", {"number": 80})],
        ("networking.k8s.io/v1", "Ingress", "web"),
    ),
}


def _objects(image: str, routing: dict[str, Any]) -> list[Obj]:
    container = {
        "name": "app",
        "image": image,
        "ports": [{"containerPort": 8080}],
        "readinessProbe": {"httpGet": {"path": "/readyz", "port": 8080}, "periodSeconds": 1},
    }
    canary = {
        "stableService": "web-stable",
        "canaryService": "web-canary",
        "trafficRouting": routing,
        "scaleDownDelaySeconds": 0,
        "steps": [{"setWeight": 25}, {"pause": {}}],
    }
    rollout = {
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
    services = [
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 8080}]},
        }
        for name in ("web-stable", "web-canary", "web")
    ]
    return [*services, rollout]


def _address(runtime: Runtime, routed: tuple[str, str, str]) -> str | None:
    try:
        obj = runtime.cluster.get(*routed, "default")
    except Exception:  # not created yet (SMI: the controller creates the TrafficSplit)
        return None
    return (obj["metadata"].get("annotations") or {}).get("headway.dev/address")


def _serves(runtime: Runtime, name: str, canary_weight: int) -> bool:
    """The mesh recorded a TrafficSplit Event for `name` giving the canary `canary_weight`."""
    return any(
        (e.get("involvedObject") or {}).get("name") == name
        and e.get("reason") == "TrafficSplit"
        and str(e.get("message", "")).endswith(f"web-canary {canary_weight}%")
        for e in runtime.cluster.list("v1", "Event", namespace="default")
    )


async def _only_version(address: str, version: str) -> None:
    """Within a deadline, 8 consecutive real requests are all answered by `version` (an
    earlier 0 % Event exists from before the canary, so the abort is judged on traffic)."""

    async def only() -> bool:
        return set((await _versions(address, 8)).keys()) == {version}

    await eventually_async(only, timeout=20, what=f"every request answered by {version}")


async def _versions(address: str, count: int) -> Counter[str]:
    seen: Counter[str] = Counter()
    async with httpx2.AsyncClient(timeout=5) as client:
        for _ in range(count):
            response = await client.get(f"http://{address}/")
            seen[response.text.split()[0] if response.status_code == 200 else "error"] += 1
    return seen


def _status(runtime: Runtime) -> dict[str, Any]:
    return dict(runtime.cluster.get(API, "Rollout", "web", "default").get("status") or {})


@pytest.mark.parametrize("router", list(CASES))
async def test_routed_canary_and_abort_through_each_router(tmp_path: Path, router: str) -> None:
    routing, user_objects, routed = CASES[router]
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
    stop = asyncio.Event()
    tasks = [asyncio.create_task(runtime.run(stop)), asyncio.create_task(manager.run(stop))]
    try:
        for obj in [*user_objects, *_objects("headway-demo/app:v1", routing)]:
            runtime.cluster.apply(obj, field_manager="test")
        await eventually(lambda: _phase(runtime) == "Healthy", timeout=20, what="v1 Healthy")
        runtime.cluster.apply(_objects("headway-demo/app:v2", routing)[-1], field_manager="test")
        await eventually(
            lambda: _status(runtime).get("pauseConditions"), timeout=25, what="paused at step 2"
        )
        address = await eventually(lambda: _address(runtime, routed), timeout=10, what="address")
        await eventually(lambda: _serves(runtime, routed[2], 25), timeout=10, what="mesh at 25%")
        split = await _versions(address, 40)
        assert split == Counter({"v1": 30, "v2": 10}), split

        rollouts_actions.abort(runtime.cluster, "default", "web")
        await _only_version(address, "v1")
        assert await _versions(address, 20) == Counter({"v1": 20})
    finally:
        stop.set()
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=20)
