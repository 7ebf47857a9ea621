"""End to end: a replica-based canary v1 -> v2 of real processes behind a real Service,
driven by the Rollout controller through the manager, to Healthy."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import httpx2
import pytest

from headway.clock import SystemClock
from headway.cluster.local.runtime import Runtime
from headway.controllers.manager import Manager
from headway.controllers.rollout.controller import RolloutController
from headway.model.obj import Obj
from polling import eventually, eventually_async

pytestmark = pytest.mark.slow
APP = Path(__file__).resolve().parents[2] / "examples" / "app" / "server.py"
API = "argoproj.io/v1alpha1"
STEPS = [{"setWeight": 50}, {"pause": {"duration": 1}}]


def _rollout(image: str) -> Obj:
    container = {
        "name": "app",
        "image": image,
        "ports": [{"containerPort": 8080}],
        "readinessProbe": {"httpGet": {"path": "/readyz", "port": 8080}, "periodSeconds": 1},
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
            "strategy": {"canary": {"steps": STEPS, "maxSurge": 1, "maxUnavailable": 0}},
        },
    }


def _phase(runtime: Runtime) -> str:
    ro = runtime.cluster.get(API, "Rollout", "web", "default")
    status = ro.get("status") or {}
    healthy = status.get("phase") == "Healthy" and status.get("observedGeneration") == str(
        ro["metadata"].get("generation")
    )
    return "Healthy" if healthy else str(status.get("phase"))


def _url(runtime: Runtime) -> str | None:
    svc = runtime.cluster.get("v1", "Service", "web", "default")
    ingress = ((svc.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
    return f"http://127.0.0.1:{ingress[0]['ports'][0]['port']}/" if ingress else None


async def _versions(url: str, count: int) -> list[str]:
    seen = []
    async with httpx2.AsyncClient(timeout=5) as client:
        for _ in range(count):
            response = await client.get(url, headers={"Connection": "close"})
            assert response.status_code == 200
            seen.append(response.text.split()[0])
    return seen


async def _answered_only_by(url: str, version: str) -> bool:
    return set(await _versions(url, 6)) == {version}


async def test_canary_v1_to_v2_with_real_processes(tmp_path: Path) -> None:
    config = tmp_path / "headway-runtime.yaml"
    config.write_text(
        f"images:\n  headway-demo/app:\n    command: [{sys.executable!r}, {str(APP)!r}]\n"
        "    versionFromTag: true\n"
    )
    clock = SystemClock()
    runtime = Runtime(
        state_dir=tmp_path, clock=clock, config_path=config, shutdown_grace_seconds=3.0
    )
    manager = Manager(runtime.cluster, clock)
    manager.register(RolloutController(runtime.cluster, clock))
    stop = asyncio.Event()
    tasks = [asyncio.create_task(runtime.run(stop)), asyncio.create_task(manager.run(stop))]
    try:
        service = {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 8080}]},
        }
        runtime.cluster.apply(service, field_manager="test")
        runtime.cluster.apply(_rollout("headway-demo/app:v1"), field_manager="test")
        await eventually(lambda: _phase(runtime) == "Healthy", timeout=20, what="v1 Healthy")
        url = await eventually(lambda: _url(runtime), timeout=10, what="service port")
        assert set(await _versions(url, 6)) == {"v1"}
        runtime.cluster.apply(_rollout("headway-demo/app:v2"), field_manager="test")
        await eventually(
            lambda: (
                runtime.cluster.get(API, "Rollout", "web", "default")["status"].get(
                    "currentStepIndex"
                )
                == 1
            ),
            timeout=20,
            what="setWeight 50 done",
        )
        await eventually(lambda: _phase(runtime) == "Healthy", timeout=25, what="v2 Healthy")
        # The Service's endpoints follow the scale-down of v1 a moment after the status does.
        await eventually_async(
            lambda: _answered_only_by(url, "v2"), timeout=10, what="every request answered by v2"
        )
        status = runtime.cluster.get(API, "Rollout", "web", "default")["status"]
        assert status["stableRS"] == status["currentPodHash"]
    finally:
        stop.set()
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=20)
