"""End to end through the Rollout controller: Istio subset-level splitting. The controller
writes the pod-template hashes into the DestinationRule's subsets and the weights into the
VirtualService's subset destinations; the local mesh routes each subset to the Pods carrying
its labels. A canary pauses at 25 % with real traffic split 30/10 between v1 and v2 behind one
Service, and an abort sends every request back to v1."""

from __future__ import annotations

import asyncio
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from test_rollout_e2e import API, APP, _phase
from test_rollout_routers_e2e import _only_version, _status, _versions

from headway.clock import SystemClock
from headway.cluster.local.runtime import Runtime
from headway.controllers.manager import Manager
from headway.controllers.rollout.controller import RolloutController
from headway.local_mesh.planes import RouterPlanes
from headway.model.obj import Obj
from headway.steering import rollouts as rollouts_actions
from polling import eventually

pytestmark = pytest.mark.slow

ISTIO = "networking.istio.io/v1beta1"
HASH = "rollouts-pod-template-hash"


def _destination(subset: str, weight: int) -> dict[str, Any]:
    return {
        "destination": {"host": "web", "subset": subset, "port": {"number": 80}},
        "weight": weight,
    }


def _user_objects() -> list[Obj]:
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 8080}]},
    }
    rule = {
        "apiVersion": ISTIO,
        "kind": "DestinationRule",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"host": "web", "subsets": [{"name": "stable"}, {"name": "canary"}]},
    }
    vs = {
        "apiVersion": ISTIO,
        "kind": "VirtualService",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "hosts": ["web"],
            "http": [
                {
                    "name": "primary",
                    "route": [_destination("stable", 100), _destination("canary", 0)],
                }
            ],
        },
    }
    return [service, rule, vs]


def _rollout(image: str) -> Obj:
    container = {
        "name": "app",
        "image": image,
        "ports": [{"containerPort": 8080}],
        "readinessProbe": {"httpGet": {"path": "/readyz", "port": 8080}, "periodSeconds": 1},
    }
    routing = {
        "istio": {
            "virtualService": {"name": "web", "routes": ["primary"]},
            "destinationRule": {
                "name": "web",
                "canarySubsetName": "canary",
                "stableSubsetName": "stable",
            },
        }
    }
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
            "strategy": {
                "canary": {
                    "trafficRouting": routing,
                    "scaleDownDelaySeconds": 0,
                    "steps": [{"setWeight": 25}, {"pause": {}}],
                }
            },
        },
    }


def _get(runtime: Runtime, kind: str) -> Obj:
    return runtime.cluster.get(ISTIO, kind, "web", "default")


def _address(runtime: Runtime) -> str | None:
    return (_get(runtime, "VirtualService")["metadata"].get("annotations") or {}).get(
        "headway.dev/address"
    )


def _mesh_at(runtime: Runtime, weight: int) -> bool:
    return any(
        (e.get("involvedObject") or {}).get("name") == "web"
        and e.get("reason") == "TrafficSplit"
        and str(e.get("message", "")).endswith(f"web#canary {weight}%")
        for e in runtime.cluster.list("v1", "Event", namespace="default")
    )


async def test_subset_canary_and_abort_with_real_traffic(tmp_path: Path) -> None:
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
        for obj in [*_user_objects(), _rollout("headway-demo/app:v1")]:
            runtime.cluster.apply(obj, field_manager="test")
        await eventually(lambda: _phase(runtime) == "Healthy", timeout=20, what="v1 Healthy")
        runtime.cluster.apply(_rollout("headway-demo/app:v2"), field_manager="test")
        await eventually(
            lambda: _status(runtime).get("pauseConditions"), timeout=25, what="paused at step 2"
        )
        status = _status(runtime)
        stable_hash, canary_hash = status["stableRS"], status["currentPodHash"]
        assert stable_hash != canary_hash
        rule = _get(runtime, "DestinationRule")
        assert (
            rule["metadata"]["annotations"]["argo-rollouts.argoproj.io/managed-by-rollouts"]
            == "web"
        )
        assert rule["spec"] == {
            "host": "web",
            "subsets": [
                {"name": "stable", "labels": {HASH: stable_hash}},
                {"name": "canary", "labels": {HASH: canary_hash}},
            ],
        }
        assert _get(runtime, "VirtualService")["spec"]["http"] == [
            {"name": "primary", "route": [_destination("stable", 75), _destination("canary", 25)]}
        ]
        address = await eventually(lambda: _address(runtime), timeout=10, what="address")
        await eventually(lambda: _mesh_at(runtime, 25), timeout=10, what="mesh at 25%")
        split = await _versions(address, 40)
        assert split == Counter({"v1": 30, "v2": 10}), split

        rollouts_actions.abort(runtime.cluster, "default", "web")
        await _only_version(address, "v1")
        assert await _versions(address, 20) == Counter({"v1": 20})
        assert _get(runtime, "VirtualService")["spec"]["http"] == [
            {"name": "primary", "route": [_destination("stable", 100), _destination("canary", 0)]}
        ]
    finally:
        stop.set()
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=20)
