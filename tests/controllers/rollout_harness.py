"""A Rollout controller on a real LocalCluster, with pods simulated at the ReplicaSet level.

`Harness.settle()` alternates controller steps with "kubelet" passes that make every
ReplicaSet's pods exist and be available (or not, for names listed in `unavailable`), until
nothing changes. Time moves only through the VirtualClock.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
from headway.controllers.manager import ObjectKey
from headway.controllers.rollout.controller import RolloutController
from headway.model.obj import Obj

API = "argoproj.io/v1alpha1"


def rollout(
    name: str = "web",
    image: str = "app:v1",
    *,
    replicas: int = 4,
    canary: dict[str, Any] | None = None,
    blue_green: dict[str, Any] | None = None,
    **spec: Any,
) -> Obj:
    strategy = {"blueGreen": blue_green} if blue_green is not None else {"canary": canary or {}}
    return {
        "apiVersion": API,
        "kind": "Rollout",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "app", "image": image}]},
            },
            "strategy": strategy,
            **spec,
        },
    }


def service(name: str, app: str = "web") -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"selector": {"app": app}, "ports": [{"port": 80}]},
    }


def template(name: str, *, args: list[dict[str, Any]] | None = None) -> Obj:
    return {
        "apiVersion": API,
        "kind": "AnalysisTemplate",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "args": args or [],
            "metrics": [
                {
                    "name": "errors",
                    "successCondition": "result[0] < 0.05",
                    "provider": {"prometheus": {"address": "http://p", "query": "q"}},
                }
            ],
        },
    }


class Harness:
    def __init__(self, tmp_path: Path, clock: VirtualClock) -> None:
        self.clock = clock
        self.path = tmp_path / "cluster.db"
        self.cluster = LocalCluster(self.path, clock)
        self.controller = RolloutController(self.cluster, clock)
        self.unavailable: set[str] = set()
        self.steps = 0

    def apply(self, obj: Obj) -> Obj:
        return self.cluster.apply(copy.deepcopy(obj), field_manager="test", force=True)

    def restart(self) -> None:
        """A new controller process on the same store (the old one is simply gone)."""
        self.cluster.close()
        self.cluster = LocalCluster(self.path, self.clock)
        self.controller = RolloutController(self.cluster, self.clock)

    def kubelet(self) -> bool:
        changed = False
        for rs in self.cluster.list("apps/v1", "ReplicaSet", namespace="default"):
            want = int(rs["spec"].get("replicas", 0))
            ready = 0 if rs["metadata"]["name"] in self.unavailable else want
            status = {
                "replicas": want,
                "readyReplicas": ready,
                "availableReplicas": ready,
                "observedGeneration": rs["metadata"].get("generation", 1),
            }
            if (rs.get("status") or {}) != status:
                self.cluster.patch_status(
                    "apps/v1", "ReplicaSet", rs["metadata"]["name"], "default", status
                )
                changed = True
        return changed

    def step(self, name: str = "web") -> float | None:
        self.steps += 1
        return self.controller.step(ObjectKey("default", name))

    def settle(self, name: str = "web", *, limit: int = 60) -> float | None:
        """Step and run pods until neither changes anything; returns the last requeue."""
        for _ in range(limit):
            before = self.cluster.revision()
            wake = self.step(name)
            self.kubelet()
            if self.cluster.revision() == before:
                return wake
        raise AssertionError(f"did not settle in {limit} steps: {self.status(name)}")

    def get(self, name: str = "web") -> Obj:
        return self.cluster.get(API, "Rollout", name, "default")

    def status(self, name: str = "web") -> dict[str, Any]:
        return dict(self.get(name).get("status") or {})

    def patch_status(self, changes: dict[str, Any], name: str = "web") -> None:
        status = {**self.status(name), **changes}
        self.cluster.patch_status(API, "Rollout", name, "default", status)

    def replica_sets(self) -> dict[str, int]:
        """pod hash -> spec.replicas."""
        sets = self.cluster.list("apps/v1", "ReplicaSet", namespace="default")
        return {
            rs["metadata"]["labels"]["rollouts-pod-template-hash"]: rs["spec"]["replicas"]
            for rs in sets
        }

    def runs(self) -> list[Obj]:
        return self.cluster.list(API, "AnalysisRun", namespace="default")

    def set_run_phase(self, name: str, phase: str, message: str = "") -> None:
        run = self.cluster.get(API, "AnalysisRun", name, "default")
        status = {**(run.get("status") or {}), "phase": phase}
        if message:
            status["message"] = message
        self.cluster.patch_status(API, "AnalysisRun", name, "default", status)

    def condition(self, kind: str, name: str = "web") -> dict[str, Any]:
        found = [c for c in self.status(name).get("conditions") or [] if c["type"] == kind]
        assert found, f"no {kind} condition in {self.status(name)}"
        return dict(found[0])
