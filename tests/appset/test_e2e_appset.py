"""Issue 15 end to end on the local runtime: a git-directories ApplicationSet generates
Applications that sync real processes; a bad template edit leaves every one of them as it
was, with a condition; RollingSync syncs step by step and holds the next step while the
first one is not Healthy."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest

from e2e_sync.e2e_helpers import API, Remote, default_project, dump, web_deployment
from headway.clock import SystemClock
from headway.cluster.local.runtime import Runtime
from headway.engine import Engine, EngineSettings, Loop
from polling import eventually

pytestmark = pytest.mark.slow


def _settings(name: str, value: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name},
        "data": {"v": value},
    }


def _appset(url: str, *, name: str = "{{.path.basename}}", rolling: bool = False) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "goTemplate": True,
        "goTemplateOptions": ["missingkey=error"],
        "generators": [
            {"git": {"repoURL": url, "revision": "main", "directories": [{"path": "stages/*"}]}}
        ],
        "template": {
            "metadata": {"name": name, "labels": {"stage": '{{.path.basename | trimSuffix "-2"}}'}},
            "spec": {
                "project": "default",
                "source": {"repoURL": url, "targetRevision": "main", "path": "{{.path.path}}"},
                "destination": {
                    "server": "https://kubernetes.default.svc",
                    "namespace": "{{.path.basename}}",
                },
                "syncPolicy": {
                    "automated": {"prune": True},
                    "syncOptions": ["CreateNamespace=true"],
                },
            },
        },
    }
    if rolling:
        steps = [
            {"matchExpressions": [{"key": "stage", "operator": "In", "values": ["qa"]}]},
            {
                "matchExpressions": [{"key": "stage", "operator": "In", "values": ["live"]}],
                "maxUpdate": 1,
            },
        ]
        spec["strategy"] = {"type": "RollingSync", "rollingSync": {"steps": steps}}
    return {
        "apiVersion": API,
        "kind": "ApplicationSet",
        "metadata": {"name": "stages", "namespace": "argocd"},
        "spec": spec,
    }


@dataclass
class Stage:
    runtime: Runtime
    remote: Remote

    def app(self, name: str) -> dict[str, Any]:
        return self.runtime.cluster.get(API, "Application", name, "argocd")

    def apps(self) -> dict[str, dict[str, Any]]:
        return {
            a["metadata"]["name"]: a
            for a in self.runtime.cluster.list(API, "Application", namespace="argocd")
        }

    def synced_at(self, name: str, revision: str) -> bool:
        app = self.apps().get(name)
        status = (app or {}).get("status") or {}
        sync = status.get("sync") or {}
        healthy = (status.get("health") or {}).get("status") == "Healthy"
        return sync.get("status") == "Synced" and sync.get("revision") == revision and healthy

    def appset_status(self) -> dict[str, Any]:
        return (
            self.runtime.cluster.get(API, "ApplicationSet", "stages", "argocd").get("status") or {}
        )

    def step_states(self) -> dict[str, str]:
        return {
            s["application"]: s["status"]
            for s in self.appset_status().get("applicationStatus") or []
        }

    def apply(self, obj: dict[str, Any]) -> None:
        self.runtime.cluster.apply(obj, field_manager="test", force=True)


@pytest.fixture
async def stage(tmp_path: Path) -> AsyncIterator[Stage]:
    clock = SystemClock()
    runtime = Runtime(state_dir=tmp_path / "state", clock=clock, shutdown_grace_seconds=2.0)
    settings = EngineSettings(
        state_dir=tmp_path / "state",
        app_poll_seconds=2,
        loops=frozenset({Loop.APPLICATIONS, Loop.APPLICATIONSETS}),
    )
    http = httpx2.AsyncClient()
    engine = Engine(cluster=runtime.cluster, clock=clock, http=http, settings=settings)
    runtime.cluster.apply(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "argocd"}},
        field_manager="test",
    )
    runtime.cluster.apply(default_project(), field_manager="test")
    stop = asyncio.Event()
    tasks = [asyncio.create_task(runtime.run(stop)), asyncio.create_task(engine.run(stop))]
    try:
        yield Stage(runtime, Remote(tmp_path / "remote.git"))
    finally:
        stop.set()
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=30)
        await http.aclose()


async def test_generated_applications_sync_and_a_bad_edit_touches_none(stage: Stage) -> None:
    first = stage.remote.commit(
        {
            "stages/qa/all.yaml": dump(_settings("settings", "qa")),
            "stages/live/all.yaml": dump(_settings("settings", "live")),
        },
        "two stages",
    )
    stage.apply(_appset(stage.remote.url))
    await eventually(lambda: sorted(stage.apps()) == ["live", "qa"], timeout=30, what="two apps")
    await eventually(
        lambda: all(stage.synced_at(n, first) for n in ("qa", "live")),
        timeout=60,
        what="both synced",
    )
    assert stage.runtime.cluster.get("v1", "ConfigMap", "settings", "live")["data"] == {"v": "live"}
    before = {n: (a["metadata"]["generation"], a["spec"]) for n, a in stage.apps().items()}

    stage.apply(_appset(stage.remote.url, name="{{.path.basenme}}"))  # the seed: a template typo

    def failed() -> bool:
        conditions = {c["type"]: c for c in stage.appset_status().get("conditions") or []}
        error = conditions.get("ErrorOccurred") or {}
        return error.get("status") == "True" and "basenme" in str(error.get("message"))

    await eventually(failed, timeout=30, what="ErrorOccurred naming the typo")
    after = {n: (a["metadata"]["generation"], a["spec"]) for n, a in stage.apps().items()}
    assert after == before
    assert all(stage.synced_at(n, first) for n in ("qa", "live"))


async def test_rolling_sync_holds_the_next_step_until_the_first_is_healthy(stage: Stage) -> None:
    files = {
        "stages/qa/all.yaml": dump(web_deployment("web", ready_path="/readyz")),
        "stages/live/all.yaml": dump(_settings("settings", "1")),
        "stages/live-2/all.yaml": dump(_settings("settings", "1")),
    }
    first = stage.remote.commit(files, "three stages")
    stage.apply(_appset(stage.remote.url, rolling=True))
    names = ("qa", "live", "live-2")
    await eventually(
        lambda: all(stage.synced_at(n, first) for n in names),
        timeout=90,
        what="all three synced step by step",
    )
    assert stage.apps()["live"]["spec"]["syncPolicy"]["automated"]["enabled"] is False

    broken = stage.remote.commit(
        {
            "stages/qa/all.yaml": dump(web_deployment("web", ready_path="/never-ready")),
            "stages/live/all.yaml": dump(_settings("settings", "2")),
            "stages/live-2/all.yaml": dump(_settings("settings", "2")),
        },
        "qa never becomes ready",
    )

    def held() -> bool:
        """qa syncs the new revision and cannot become Healthy; both live stages have seen
        the new revision (OutOfSync) and wait for it."""
        states = stage.step_states()
        syncs = {n: (stage.apps()[n].get("status") or {}).get("sync") or {} for n in names}
        live = ("live", "live-2")
        return (
            states.get("qa") == "Progressing"
            and syncs["qa"].get("revision") == broken
            and all(states.get(n) == "Waiting" for n in live)
            and all(syncs[n].get("revision") == broken for n in live)
            and all(syncs[n].get("status") == "OutOfSync" for n in live)
        )

    await eventually(held, timeout=60, what="qa progressing, the live stages waiting")
    assert stage.runtime.cluster.get("v1", "ConfigMap", "settings", "live")["data"] == {"v": "1"}
    conditions = {c["type"]: c for c in stage.appset_status()["conditions"]}
    assert (
        conditions["RolloutProgressing"]["message"]
        == "ApplicationSet is performing rollout of step 1"
    )

    fixed = stage.remote.commit(
        {"stages/qa/all.yaml": dump(web_deployment("web", ready_path="/readyz"))}, "qa ready again"
    )
    await eventually(
        lambda: all(stage.synced_at(n, fixed) for n in names),
        timeout=90,
        what="every stage synced after qa became Healthy",
    )
    assert stage.runtime.cluster.get("v1", "ConfigMap", "settings", "live-2")["data"] == {"v": "2"}
