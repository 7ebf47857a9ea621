"""A promotion controller over a real local store on a virtual clock, with an in-memory
repository edge that counts commits (so resume tests can prove there was no second one)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
from headway.controllers.manager import ObjectKey
from headway.promotion.controller import Hook, PromotionController, promotion_object
from headway.promotion.facts import Resolved
from headway.promotion.forge_approvals import ApprovalChannel
from headway.promotion.lifecycle import Stage
from headway.promotion.record import API_VERSION, KIND, PromotionSpec, read_status

ARGO = "argoproj.io/v1alpha1"
NS = "argocd"


@dataclass
class FakeRepo:
    """One branch: a list of (sha, environment, image, trailers) commits."""

    pins: dict[str, str]
    commits: list[dict[str, str]] = field(default_factory=list)

    def for_env(self, env: str) -> EnvRepo:
        return EnvRepo(self, env)


@dataclass
class EnvRepo:
    repo: FakeRepo
    env: str
    config: str = ""

    def pinned(self) -> str:
        return self.repo.pins.get(self.env, "")

    def find_commit(self, promotion: str) -> str:
        return next((c["sha"] for c in self.repo.commits if c.get("promotion") == promotion), "")

    def find_revert(self, commit: str) -> str:
        return next((c["sha"] for c in self.repo.commits if c.get("revert_of") == commit), "")

    def config_change(self) -> str:
        return self.config

    def exempt(self) -> bool:
        return False

    def _commit(self, image: str, **trailers: str) -> str:
        sha = f"{len(self.repo.commits) + 1:040x}"
        self.repo.commits.append({"sha": sha, "env": self.env, "image": image, **trailers})
        self.repo.pins[self.env] = image
        return sha

    def file_version(self) -> str:
        return ""  # the fake holds no file: the real check is in test_gate_judges_the_tip.py

    def commit_image(
        self, image: str, *, promotion: PromotionSpec, previous: str, file_version: str = ""
    ) -> str:
        return self._commit(image, promotion=promotion.name)

    def revert_image(self, image: str, *, promotion: PromotionSpec, commit: str) -> str:
        return self._commit(image, revert_of=commit)

    def contains(self, revision: str, commit: str) -> bool:
        shas = [c["sha"] for c in self.repo.commits]
        return revision in shas and commit in shas and shas.index(revision) >= shas.index(commit)


STAGES = {
    "dev": Stage("dev", "web-dev", auto_next="staging"),
    "staging": Stage("staging", "web-staging", previous="dev", auto_next="prod"),
    "prod": Stage(
        "prod",
        "web-prod",
        approval_required=True,
        approvers=("lead@x.io",),
        approval_timeout=3600,
        previous="staging",
    ),
}


class Harness:
    def __init__(self, tmp_path: Path) -> None:
        self.clock = VirtualClock()
        self.store = LocalCluster(tmp_path / "cluster.db", self.clock)
        self.repo = FakeRepo({"dev": "v1", "staging": "v1", "prod": "v1"})
        self.env_repos = {env: self.repo.for_env(env) for env in STAGES}
        self.approvals: ApprovalChannel | None = None
        self.store.apply(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}},
            field_manager="test",
        )
        self.controller = self.new_controller()
        for env in STAGES:
            self.run_app(env, "v1")

    def resolve(self, spec: PromotionSpec) -> Resolved | str:
        if spec.environment not in STAGES:
            return f"pipeline {spec.pipeline} has no environment {spec.environment}"
        stage, repo = STAGES[spec.environment], self.env_repos[spec.environment]
        return Resolved(stage, NS, repo, self.approvals)

    def new_controller(self, hook: Hook | None = None) -> PromotionController:
        return PromotionController(self.store, self.clock, resolve=self.resolve, hook=hook)

    def run_app(self, env: str, image: str, health: str = "Healthy") -> None:
        """The environment's Application as the app controller would report it."""
        name = STAGES[env].application
        app: dict[str, Any] = {
            "apiVersion": ARGO,
            "kind": "Application",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"destination": {"namespace": env}},
        }
        self.store.apply(app, field_manager="test")
        revision = self.repo.commits[-1]["sha"] if self.repo.commits else "0" * 40
        status = {
            "sync": {"status": "Synced", "revision": revision},
            "health": {"status": health},
            "summary": {"images": [f"registry.local/web:{image}"]},
        }
        self.store.patch_status(ARGO, "Application", name, NS, status)

    def promote(
        self, name: str, env: str, image: str, *, author: str = "dev@x.io", **more: Any
    ) -> None:
        spec = PromotionSpec(
            name=name,
            namespace=NS,
            pipeline="web",
            environment=env,
            image=image,
            author=author,
            requested_at=self.clock.now(),
            **more,
        )
        self.store.apply(promotion_object(spec), field_manager="test")

    def decide(self, name: str, verdict: str, by: str) -> None:
        obj = self.store.get(API_VERSION, KIND, name, NS)
        decisions = list(obj["spec"].get("decisions") or [])
        at = (self.clock.now()).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        decisions.append({"decision": verdict, "by": by, "at": at, "via": "cli"})
        obj["spec"]["decisions"] = decisions
        self.store.update(obj, field_manager="test")

    def step(self, name: str, controller: PromotionController | None = None) -> float | None:
        return (controller or self.controller).step(ObjectKey(NS, name))

    def phase(self, name: str) -> str:
        return read_status(self.store.get(API_VERSION, KIND, name, NS)).phase.value

    def status(self, name: str) -> dict[str, Any]:
        return dict(self.store.get(API_VERSION, KIND, name, NS).get("status") or {})

    def advance(self, seconds: float) -> None:
        self.clock.advance(seconds)

    def later(self, seconds: float) -> timedelta:
        return timedelta(seconds=seconds)
