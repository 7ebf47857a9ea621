"""End to end on the local runtime: the seeds' "selfHeal fights the HPA over replicas".

An app shaped like the seeds' library chart — a Deployment in wave 1, its HPA in wave 2 —
syncs to the end because the runtime's autoscaler makes the HPA Healthy. The HPA's
`minReplicas: 3` then raises the Deployment Git keeps at 1. With auto-sync and selfHeal
alone, every self-heal sync puts 1 back and the autoscaler 3 again: the Deployment's
`generation` counts each flap. With `ignoreDifferences` on `/spec/replicas` and
`RespectIgnoreDifferences=true`, the app is Synced at 3 replicas and nothing flaps; the same
when the rule is system-wide, in argocd-cm, as many Argo CD installations keep it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from e2e_sync.e2e_helpers import API, Remote, application, default_project, dump, web_deployment
from headway.clock import SystemClock
from headway.cluster.local.runtime import Runtime
from headway.engine import Engine, EngineSettings, Loop
from headway.kubetime import parse_time
from polling import eventually

pytestmark = pytest.mark.slow


def _web() -> dict[str, Any]:
    web = web_deployment("web", ready_path="/readyz", wave=1)
    container = web["spec"]["template"]["spec"]["containers"][0]
    container["resources"] = {"requests": {"cpu": "100m"}}
    return web


HPA = {
    "apiVersion": "autoscaling/v2",
    "kind": "HorizontalPodAutoscaler",
    "metadata": {"name": "web", "annotations": {"argocd.argoproj.io/sync-wave": "2"}},
    "spec": {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "minReplicas": 3,
        "maxReplicas": 6,
    },
}


@contextlib.asynccontextmanager
async def _running(
    tmp_path: Path, app: dict[str, Any], *settings_maps: dict[str, Any]
) -> AsyncIterator[Runtime]:
    remote = Remote(tmp_path / "remote.git")
    remote.commit({"app/all.yaml": dump(_web(), HPA)}, "web and its autoscaler")
    app["spec"]["source"]["repoURL"] = remote.url
    clock = SystemClock()
    runtime = Runtime(state_dir=tmp_path / "state", clock=clock, shutdown_grace_seconds=2.0)
    settings = EngineSettings(state_dir=tmp_path / "state", loops=frozenset({Loop.APPLICATIONS}),
                              app_poll_seconds=3600, resync_seconds=1.0)
    http = httpx2.AsyncClient()
    engine = Engine(cluster=runtime.cluster, clock=clock, http=http, settings=settings)
    for obj in ({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "argocd"}},
                default_project(), *settings_maps, app):
        runtime.cluster.apply(obj, field_manager="test")
    stop = asyncio.Event()
    tasks = [asyncio.create_task(runtime.run(stop)), asyncio.create_task(engine.run(stop))]
    try:
        yield runtime
    finally:
        stop.set()
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=20)
        await http.aclose()


def _status(runtime: Runtime) -> dict[str, Any]:
    return dict(runtime.cluster.get(API, "Application", "shop", "argocd").get("status") or {})


def _deployment(runtime: Runtime) -> dict[str, Any]:
    return runtime.cluster.get("apps/v1", "Deployment", "web", "default")


def _self_heals(runtime: Runtime) -> int:
    operation = (_status(runtime).get("operationState") or {}).get("operation") or {}
    return int((operation.get("sync") or {}).get("selfHealAttemptsCount") or 0)


def _first_sync_done(runtime: Runtime) -> bool:
    status = _status(runtime)
    return bool(status.get("history")) and status["history"][0]["phase"] == "Succeeded"


async def test_self_heal_alone_flaps_the_replicas_the_hpa_sets(tmp_path: Path) -> None:
    app = application("shop", "", automated={"prune": True, "selfHeal": True})
    async with _running(tmp_path, app) as runtime:
        await eventually(lambda: _first_sync_done(runtime), timeout=60,
                         what="the waves synced to the HPA (it became Healthy)")
        # created (1) -> HPA to 3 (2) -> self-heal to 1 (3) -> HPA to 3 (4) -> self-heal (5)
        await eventually(lambda: _deployment(runtime)["metadata"]["generation"] >= 5,
                         timeout=60, what="two self-heal/HPA flaps")
        await eventually(lambda: _self_heals(runtime) >= 2, timeout=30,
                         what="the second self-heal sync")
        events = runtime.cluster.list("v1", "Event", namespace="default")
        rescales = [e for e in events if e.get("reason") == "SuccessfulRescale"]
        assert sum(int(e.get("count") or 1) for e in rescales) >= 2


SYSTEM_WIDE_RULE = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "argocd-cm", "namespace": "argocd"},
    "data": {"resource.customizations.ignoreDifferences.apps_Deployment":
             "jsonPointers:\n- /spec/replicas\n"},
}


@pytest.mark.parametrize("where", ["application", "argocd-cm"])
async def test_ignore_differences_respected_stops_the_fight(tmp_path: Path, where: str) -> None:
    app = application("shop", "", automated={"prune": True, "selfHeal": True},
                      syncOptions=["RespectIgnoreDifferences=true"])
    settings_maps = [SYSTEM_WIDE_RULE] if where == "argocd-cm" else []
    if where == "application":
        app["spec"]["ignoreDifferences"] = [
            {"group": "apps", "kind": "Deployment", "jsonPointers": ["/spec/replicas"]}]
    async with _running(tmp_path, app, *settings_maps) as runtime:
        await eventually(lambda: _first_sync_done(runtime), timeout=60,
                         what="the waves synced to the HPA (it became Healthy)")
        await eventually(lambda: _deployment(runtime)["spec"]["replicas"] == 3, timeout=30,
                         what="the HPA raised the Deployment to minReplicas")
        scaled = parse_time(runtime.cluster.get(
            "autoscaling/v2", "HorizontalPodAutoscaler", "web", "default")["status"][
            "lastScaleTime"])
        assert scaled is not None
        # A comparison after the HPA's change that finds the app Synced: without the fix,
        # that comparison is what finds it OutOfSync and schedules the self-heal.

        def compared_since() -> bool:
            status = _status(runtime)
            reconciled = parse_time(status.get("reconciledAt"))
            return (reconciled is not None and reconciled > scaled
                    and status["sync"]["status"] == "Synced"
                    and status["health"]["status"] == "Healthy")

        await eventually(compared_since, timeout=60, what="Synced and Healthy at 3 replicas")
        assert _deployment(runtime)["metadata"]["generation"] == 2  # 1 -> 3, nothing since
        assert len(_status(runtime)["history"]) == 1  # no self-heal sync
