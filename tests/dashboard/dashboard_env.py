"""A dashboard served from a thread of its own (so a blocking client, Selenium or httpx2's
sync client, can talk to it), over a store filled with a real Rollout mid-canary, an
AnalysisRun with measurements, and an Application mid-sync."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controllers.rollout_harness import Harness, rollout
from headway.clock import Clock, VirtualClock
from headway.cluster.protocol import Cluster
from headway.dashboard.server import DashboardServer
from headway.model.obj import Obj
from headway.source.git import GitCache

API = "argoproj.io/v1alpha1"
STEPS = [{"setWeight": 25}, {"pause": {}}, {"setWeight": 50}, {"pause": {}}]


@dataclass(frozen=True)
class Served:
    url: str
    token: str
    server: DashboardServer


@contextmanager
def serving(
    cluster: Cluster, state_dir: Path, git: GitCache | None = None, clock: Clock | None = None
) -> Iterator[Served]:
    """The dashboard on a free loopback port until the block ends (reading commit messages
    from `git`, the controller's cache, when given; its clock stamps decisions)."""
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    box: dict[str, Any] = {}

    async def main() -> None:
        server = DashboardServer(
            cluster=cluster, clock=clock or VirtualClock(), state_dir=state_dir, git=git
        )
        box["server"], box["started"] = server, await server.start()
        box["done"] = asyncio.Event()
        ready.set()
        await box["done"].wait()
        await server.stop()

    thread = threading.Thread(target=lambda: loop.run_until_complete(main()), daemon=True)
    thread.start()
    if not ready.wait(30):
        raise AssertionError("the dashboard did not start within 30s")
    try:
        started = box["started"]
        yield Served(started.url.rstrip("/"), started.new_token or "", box["server"])
    finally:
        loop.call_soon_threadsafe(box["done"].set)
        thread.join(30)


def analysis_run(rollout: Obj, *, pod_hash: str, phase: str, values: list[float]) -> Obj:
    """A run of `rollout`'s canary with one measurement per value, 10 s apart, judged against
    `result[0] < 0.05` (success) and `result[0] >= 0.2` (failure)."""
    measurements = [
        {
            "phase": "Successful" if v < 0.05 else "Failed",
            "value": f"[{v}]",
            "startedAt": f"2026-01-01T00:00:{10 * i:02d}Z",
            "finishedAt": f"2026-01-01T00:00:{10 * i + 1:02d}Z",
        }
        for i, v in enumerate(values)
    ]
    meta = rollout["metadata"]
    return {
        "apiVersion": API,
        "kind": "AnalysisRun",
        "metadata": {
            "name": f"{meta['name']}-{pod_hash}-1",
            "namespace": meta["namespace"],
            "labels": {"rollouts-pod-template-hash": pod_hash},
            "ownerReferences": [
                {"apiVersion": API, "kind": "Rollout", "name": meta["name"], "uid": meta["uid"],
                 "controller": True}
            ],
        },
        "spec": {
            "metrics": [
                {
                    "name": "error-rate",
                    "successCondition": "result[0] < 0.05",
                    "failureCondition": "result[0] >= 0.2",
                    "provider": {"prometheus": {"address": "http://p", "query": "q"}},
                }
            ]
        },
        "status": {
            "phase": phase,
            "metricResults": [
                {"name": "error-rate", "phase": phase, "measurements": measurements,
                 "count": len(values)}
            ],
            "completedAt": "2026-01-01T00:01:00Z",
        },
    }


def application(name: str = "guestbook", *, repo: str = "https://git.example.com/r.git") -> Obj:
    """An Application mid-sync: wave 1 waits on a Deployment that is Progressing."""
    return {
        "apiVersion": API,
        "kind": "Application",
        "metadata": {"name": name, "namespace": "argocd"},
        "spec": {
            "project": "default",
            "source": {"repoURL": repo, "path": "guestbook", "targetRevision": "main"},
            "destination": {"server": "https://kubernetes.default.svc", "namespace": "default"},
            "ignoreDifferences": [
                {"group": "apps", "kind": "Deployment", "jsonPointers": ["/spec/replicas"]}
            ],
        },
    }


def application_status(revision: str = "a" * 40) -> dict[str, Any]:
    return {
        "sync": {"status": "OutOfSync", "revision": revision},
        "health": {"status": "Progressing", "message": "Deployment/web is Progressing"},
        "resources": [
            {"group": "", "version": "v1", "kind": "ConfigMap", "namespace": "default",
             "name": "settings", "status": "Synced", "syncWave": 0,
             "health": {"status": "Healthy"}},
            {"group": "apps", "version": "v1", "kind": "Deployment", "namespace": "default",
             "name": "web", "status": "OutOfSync", "syncWave": 1,
             "health": {"status": "Progressing", "message": "0 of 2 updated replicas available"}},
            {"group": "", "version": "v1", "kind": "Secret", "namespace": "default",
             "name": "db-password", "status": "Synced", "syncWave": 0},
        ],
        "conditions": [
            {"type": "SyncError",
             "message": "fetch https://bot:s3cr3t-token@git.example.com/r.git failed"},
        ],
        "operationState": {
            "phase": "Running",
            "message": "wave 1: waiting for Deployment/web to be Healthy "
            "(0 of 2 updated replicas available)",
            "startedAt": "2026-01-01T00:00:00Z",
            "operation": {"sync": {"revision": revision}, "retry": {"limit": 5},
                          "initiatedBy": {"automated": True}},
            "retryCount": 2,
            "wave": {"phase": "Sync", "wave": 1, "applied": True},
        },
        "history": [
            {"id": 0, "revision": "b" * 40, "deployedAt": "2025-12-31T23:00:00Z",
             "phase": "Succeeded", "initiatedBy": {"username": "alice"},
             "message": "successfully synced (all tasks run)"},
        ],
    }


def secret() -> Obj:
    return {
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "db-password", "namespace": "default"},
        "data": {"password": "aHVudGVyMi1zdXBlci1zZWNyZXQ="},  # hunter2-super-secret
    }


@dataclass(frozen=True)
class Scene:
    harness: Harness
    served: Served
    state_dir: Path
    canary_hash: str


def fill(h: Harness) -> str:
    """The scene's objects; returns the canary's pod-template hash."""
    h.apply(rollout(replicas=4, canary={"steps": STEPS}))
    h.settle()  # v1 is promoted at once
    h.apply(rollout(image="app:v2", replicas=4, canary={"steps": STEPS}))
    h.settle()  # v2: setWeight 25, then paused at step 1
    status = h.status()
    run = analysis_run(h.get(), pod_hash=status["currentPodHash"], phase="Running",
                       values=[0.01, 0.02, 0.03])
    h.cluster.apply(run, field_manager="test", force=True)
    h.cluster.patch_status(API, "AnalysisRun", run["metadata"]["name"], "default", run["status"])
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "argocd"}}
    h.cluster.apply(namespace, field_manager="test", force=True)
    app = h.cluster.apply(application(), field_manager="test", force=True)
    h.cluster.patch_status(API, "Application", "guestbook", "argocd", application_status())
    h.cluster.apply(secret(), field_manager="test", force=True)
    assert app["metadata"]["name"] == "guestbook"
    return str(status["currentPodHash"])
