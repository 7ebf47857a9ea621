"""End to end on the local runtime: a Deployment serving real traffic is swapped for a Rollout
(`workloadRef`, `scaleDown: progressively`) while a client keeps calling the Service. No
request may fail, and at the end only the Rollout's pods answer."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest
from test_rollout_e2e import API, APP

from headway.clock import SystemClock
from headway.cluster.local.runtime import Runtime
from headway.controllers.manager import Manager
from headway.controllers.rollout.controller import RolloutController
from headway.model.obj import Obj
from polling import eventually

pytestmark = pytest.mark.slow


def _deployment() -> Obj:
    container = {
        "name": "app",
        "image": "headway-demo/app:v1",
        "ports": [{"containerPort": 8080}],
        "readinessProbe": {"httpGet": {"path": "/readyz", "port": 8080}, "periodSeconds": 1},
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"terminationGracePeriodSeconds": 2, "containers": [container]},
            },
        },
    }


def _rollout() -> Obj:
    ref = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web",
           "scaleDown": "progressively"}
    steps = [{"setWeight": 50}, {"pause": {"duration": 1}}]
    return {
        "apiVersion": API,
        "kind": "Rollout",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"replicas": 2, "workloadRef": ref, "strategy": {"canary": {"steps": steps}}},
    }


def _service() -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 8080}]},
    }


def _url(runtime: Runtime) -> str | None:
    svc = runtime.cluster.get("v1", "Service", "web", "default")
    ingress = ((svc.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
    return f"http://127.0.0.1:{ingress[0]['ports'][0]['port']}/" if ingress else None


def _owned_pod_prefixes(runtime: Runtime, owner_kind: str) -> set[str]:
    """`<ReplicaSet name>-` of the ReplicaSets `owner_kind` controls (pods are named so)."""
    return {
        rs["metadata"]["name"] + "-"
        for rs in runtime.cluster.list("apps/v1", "ReplicaSet", namespace="default")
        if any(r.get("kind") == owner_kind for r in rs["metadata"].get("ownerReferences") or [])
    }


def _migrated(runtime: Runtime) -> bool:
    ro = runtime.cluster.get(API, "Rollout", "web", "default")
    status = ro.get("status") or {}
    workload = runtime.cluster.get("apps/v1", "Deployment", "web", "default")
    pods = [p["metadata"]["name"] for p in runtime.cluster.list("v1", "Pod", namespace="default")]
    old = _owned_pod_prefixes(runtime, "Deployment")
    return (
        status.get("phase") == "Healthy"
        and workload["spec"]["replicas"] == 0
        and not any(p.startswith(tuple(old)) for p in pods)
    )


async def _call_until(url: str, stop: asyncio.Event, answers: list[tuple[int, str]]) -> None:
    async with httpx2.AsyncClient(timeout=5) as client:
        while not stop.is_set():
            try:
                response = await client.get(url, headers={"Connection": "close"})
                answers.append((response.status_code, response.text.strip()))
            except httpx2.HTTPError as err:
                answers.append((0, f"{type(err).__name__}: {err}"))
            await asyncio.sleep(0.02)


async def test_a_deployment_is_swapped_for_a_rollout_without_a_failed_request(
    tmp_path: Path,
) -> None:
    config = tmp_path / "headway-runtime.yaml"
    config.write_text(
        f"images:\n  headway-demo/app:\n    command: [{sys.executable!r}, {str(APP)!r}]\n"
        "    versionFromTag: true\n"
    )
    clock = SystemClock()
    runtime = Runtime(state_dir=tmp_path, clock=clock, config_path=config,
                      shutdown_grace_seconds=3.0)
    manager = Manager(runtime.cluster, clock)
    manager.register(RolloutController(runtime.cluster, clock))
    stop, calls_done = asyncio.Event(), asyncio.Event()
    tasks = [asyncio.create_task(runtime.run(stop)), asyncio.create_task(manager.run(stop))]
    answers: list[tuple[int, str]] = []
    try:
        runtime.cluster.apply(_service(), field_manager="test")
        runtime.cluster.apply(_deployment(), field_manager="test")
        url = await eventually(lambda: _url(runtime), timeout=10, what="service port")

        def deployment_ready() -> Any:
            found = runtime.cluster.get("apps/v1", "Deployment", "web", "default")
            return (found.get("status") or {}).get("availableReplicas") == 2

        await eventually(deployment_ready, timeout=20, what="the Deployment's 2 pods ready")
        caller = asyncio.create_task(_call_until(url, calls_done, answers))
        await eventually(lambda: len(answers) >= 5, timeout=10, what="traffic flowing")
        runtime.cluster.apply(_rollout(), field_manager="test")
        await eventually(lambda: _migrated(runtime), timeout=40, what="migrated to the Rollout")
        settled = len(answers)
        await eventually(lambda: len(answers) >= settled + 10, timeout=10, what="more traffic")
        calls_done.set()
        await caller
        new = _owned_pod_prefixes(runtime, "Rollout")
    finally:
        calls_done.set()
        stop.set()
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=20)
    failed = [a for a in answers if a[0] != 200]
    assert not failed, f"{len(failed)} of {len(answers)} requests failed: {failed[:5]}"
    last = [text.split()[1] for _, text in answers[-10:]]
    assert all(pod.startswith(tuple(new)) for pod in last), (last, new)
