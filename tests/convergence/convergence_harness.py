"""An aborted Rollout in a real LocalCluster, managed by an Application reading a real repo."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
from headway.controllers.convergence.controller import ConvergenceController
from headway.controllers.manager import ObjectKey
from headway.model.obj import Obj
from headway.source.git import GitCache

API = "argoproj.io/v1alpha1"
NS = "shop"


def pod_template(image: str) -> dict[str, Any]:
    return {
        "metadata": {"labels": {"app": "web"}},
        "spec": {"containers": [{"name": "web", "image": image}]},
    }


def application(repo_url: str, *, automated: bool = True, **annotations: str) -> Obj:
    spec: dict[str, Any] = {
        "project": "default",
        "source": {"repoURL": repo_url, "targetRevision": "HEAD", "path": "apps/web"},
        "destination": {"server": "https://kubernetes.default.svc", "namespace": NS},
    }
    if automated:
        spec["syncPolicy"] = {"automated": {"prune": True}}
    meta: dict[str, Any] = {"name": "web", "namespace": "argocd"}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": API, "kind": "Application", "metadata": meta, "spec": spec}


class Harness:
    def __init__(self, tmp_path: Path, clock: VirtualClock, repo_url: str) -> None:
        self.tmp_path = tmp_path
        self.clock = clock
        self.cluster = LocalCluster(tmp_path / "cluster.db", clock)
        self.git = GitCache(tmp_path / "git-cache")
        self.controller = ConvergenceController(self.cluster, clock, git=self.git)
        self.repo_url = repo_url
        for namespace in ("argocd", NS):
            self.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})

    def apply(self, obj: Obj) -> Obj:
        return self.cluster.apply(copy.deepcopy(obj), field_manager="test", force=True)

    def restart(self) -> None:
        self.controller = ConvergenceController(
            self.cluster, self.clock, git=GitCache(self.tmp_path / "git-cache")
        )

    def abort(
        self,
        *,
        stable: str,
        failed: str,
        app: Obj | None = None,
        run: str = "web-canary1-2",
        aborted_at: str | None = None,
    ) -> None:
        """A Rollout that aborted `failed` (pod hash canary1) back to `stable` (stable1), after
        the AnalysisRun `run` failed, at `aborted_at` (`status.abortedAt`, omitted when None)."""
        self.apply(app or application(self.repo_url))
        ro = self.apply(
            {
                "apiVersion": API,
                "kind": "Rollout",
                "metadata": {
                    "name": "web",
                    "namespace": NS,
                    "labels": {"app.kubernetes.io/instance": "web"},
                },
                "spec": {
                    "replicas": 2,
                    "template": pod_template(failed),
                    "strategy": {"canary": {}},
                },
            }
        )
        owner = {
            "apiVersion": API,
            "kind": "Rollout",
            "name": "web",
            "uid": ro["metadata"]["uid"],
            "controller": True,
        }
        self.apply(
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": {
                    "name": "web-stable1",
                    "namespace": NS,
                    "ownerReferences": [owner],
                    "labels": {"rollouts-pod-template-hash": "stable1"},
                },
                "spec": {"replicas": 2, "template": pod_template(stable)},
            }
        )
        self.apply(
            {
                "apiVersion": API,
                "kind": "AnalysisRun",
                "metadata": {
                    "name": run,
                    "namespace": NS,
                    "ownerReferences": [owner],
                    "labels": {"rollouts-pod-template-hash": "canary1"},
                },
                "spec": {"metrics": []},
            }
        )
        self.cluster.patch_status(
            API,
            "AnalysisRun",
            run,
            NS,
            {
                "phase": "Failed",
                "message": 'metric "error-ratio" assessed Failed',
                "metricResults": [
                    {
                        "name": "p99-latency",
                        "phase": "Successful",
                        "measurements": [{"phase": "Successful", "value": "0.05"}],
                    },
                    {
                        "name": "error-ratio",
                        "phase": "Failed",
                        "failed": 2,
                        "message": "",
                        "measurements": [
                            {"phase": "Failed", "value": "0.31"},
                            {"phase": "Failed", "value": "0.29"},
                        ],
                    },
                ],
            },
        )
        self.cluster.patch_status(
            API,
            "Rollout",
            "web",
            NS,
            {
                "abort": True,
                "phase": "Degraded",
                "message": "RolloutAborted: Rollout aborted update to revision 3",
                "currentPodHash": "canary1",
                "stableRS": "stable1",
                **({"abortedAt": aborted_at} if aborted_at else {}),
            },
        )

    def recover(self) -> None:
        """The Rollout back on its stable revision after the revert synced: not aborted."""
        self.cluster.patch_status(
            API,
            "Rollout",
            "web",
            NS,
            {"phase": "Healthy", "currentPodHash": "stable1", "stableRS": "stable1"},
        )

    def step(self) -> float | None:
        return self.controller.step(ObjectKey(NS, "web"))

    def rollout(self) -> Obj:
        return self.cluster.get(API, "Rollout", "web", NS)

    def condition(self) -> dict[str, Any]:
        conditions = (self.rollout().get("status") or {}).get("conditions") or []
        return next(c for c in conditions if c["type"] == "GitConvergence")

    def events(self) -> list[tuple[str, str, str]]:
        return [
            (e["type"], e["reason"], e["message"])
            for e in self.cluster.list("v1", "Event", namespace=NS)
            if e.get("source", {}).get("component") == "headway-git-convergence"
            or e["reason"].startswith("GitRevert")
        ]
