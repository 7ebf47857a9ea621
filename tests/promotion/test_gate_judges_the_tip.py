"""The gate judges the file it commits onto: a hand edit that lands between the gate's look
and the commit (the controller's `before-action` hook lands it there, every time) is never
committed under a decision made about another file.

The controller runs on a real local store and a virtual clock; the environment's branch is a
real repository, read through the same `FetchOncePerStep` wrapper the engine's resolver uses
(one tip per step, a write makes the next read real).
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import pygit2
from promotion_harness import Harness

from headway.controllers.convergence.git import LocalBranch
from headway.model.promotion_pipeline import Environment, parse_promotion_pipeline
from headway.model.yamlload import Document
from headway.promotion.approval import Decision
from headway.promotion.classify import config_check
from headway.promotion.controller import PromotionController
from headway.promotion.environment_repo import GitEnvironment
from headway.promotion.environments import FetchOncePerStep
from headway.promotion.facts import Resolved
from headway.promotion.lifecycle import Stage
from headway.promotion.record import PromotionSpec
from headway.source.git_commits import BotIdentity

FILE = "values-staging.yaml"
VALUES = """\
image:
  repository: registry.local/web
  tag: v1
env:
  - name: LOG_LEVEL
    value: info
"""
STAGE = Stage("staging", "web-staging", approval_required=True, approvers=("lead@x.io",))


def _environment() -> Environment:
    raw: dict[str, Any] = {
        "apiVersion": "headway.dev/v1alpha1",
        "kind": "PromotionPipeline",
        "metadata": {"name": "web", "namespace": "argocd"},
        "spec": {
            "image": "registry.local/web",
            "environments": [
                {
                    "name": "staging",
                    "application": "web-staging",
                    "target": {"file": FILE, "helm": {"key": "image.tag"}},
                    "gate": {
                        "approval": {"required": True, "approvers": ["lead@x.io"]},
                        "exempt": ["image.tag"],
                    },
                }
            ],
        },
    }
    pipeline, problems = parse_promotion_pipeline(Document(raw, "pipeline", 0, 0))
    assert pipeline is not None and not problems, problems
    return pipeline.spec.environments[0]


class Issues:
    """An approval channel that only remembers: the issues opened, what each was told."""

    def __init__(self) -> None:
        self.opened: list[str] = []
        self.told: dict[int, list[str]] = {}

    def open(
        self,
        spec: PromotionSpec,
        *,
        approvers: tuple[str, ...],
        requested_at: datetime,
        deadline: datetime,
    ) -> tuple[int, str]:
        self.opened.append(spec.name)
        return len(self.opened), f"issues/{len(self.opened)}"

    def decisions(self, issue: int) -> tuple[Decision, ...]:
        return ()

    def tell(self, issue: int, text: str, *, once: str) -> None:
        self.told.setdefault(issue, []).append(text)


class Stand:
    """The harness's store and clock, with staging's branch a real repository."""

    def __init__(self, tmp_path: Path) -> None:
        self.h = Harness(tmp_path)
        self.issues = Issues()
        self.path = tmp_path / "repo"
        self.path.mkdir()
        (self.path / FILE).write_text(VALUES)
        self.git("init", "-q", "-b", "main")
        self.git("add", ".")
        self.git("commit", "-qm", "staging on v1")
        self.env = _environment()
        # A known-good state to compare with: the first promotion's commit.
        self.repo().commit_image("registry.local/web:v2", promotion=self.spec("p0"), previous="")

    def git(self, *args: str) -> None:
        command = ["git", "-c", "user.name=t", "-c", "user.email=t@x", *args]
        subprocess.run(command, cwd=self.path, check=True)

    def repo(self) -> GitEnvironment:
        writer = FetchOncePerStep(LocalBranch(self.path, "main", BotIdentity()))
        return GitEnvironment(
            writer=writer,
            env=self.env,
            repository="registry.local/web",
            config_check=config_check(self.env),
        )

    def resolve(self, spec: PromotionSpec) -> Resolved | str:
        return Resolved(STAGE, "argocd", self.repo(), self.issues)  # a fresh tip per step

    def controller(self, hook: Callable[[str], None] | None = None) -> PromotionController:
        return PromotionController(self.h.store, self.h.clock, resolve=self.resolve, hook=hook)

    def spec(self, name: str) -> PromotionSpec:
        return PromotionSpec(
            name=name,
            namespace="argocd",
            pipeline="web",
            environment="staging",
            image="registry.local/web:v2",
            author="dev@x.io",
            requested_at=self.h.clock.now(),
        )

    def edit_by_hand(self, old: str, new: str) -> None:
        text = (self.path / FILE).read_text()
        assert old in text
        (self.path / FILE).write_text(text.replace(old, new))
        self.git("commit", "-qam", f"by hand: {new.strip()}")

    def once_before_the_commit(self, old: str, new: str) -> Callable[[str], None]:
        """A hook that lands a hand edit after the gate looked, before the commit is made."""
        landed: list[bool] = []

        def hook(point: str) -> None:
            if point == "before-action" and not landed:
                landed.append(True)
                self.edit_by_hand(old, new)

        return hook

    def promotion_commits(self, name: str) -> list[str]:
        repo = pygit2.Repository(str(self.path))
        walker = repo.walk(repo.references["refs/heads/main"].target)
        return [str(c.id) for c in walker if f"Headway-Promotion: {name}\n" in (c.message or "")]

    def file(self) -> str:
        return (self.path / FILE).read_text()


def test_a_hand_edit_landing_after_an_exempt_look_is_not_committed_and_is_then_held(
    tmp_path: Path,
) -> None:
    s = Stand(tmp_path)
    s.h.promote("web-staging-3", "staging", "registry.local/web:v3")
    landing = s.once_before_the_commit("value: info", "value: debug")
    s.h.step("web-staging-3", s.controller(landing))  # looked exempt; the edit lands; refused
    assert s.h.phase("web-staging-3") == "Pending"
    assert "changed" in s.h.status("web-staging-3")["message"]
    assert s.promotion_commits("web-staging-3") == []
    assert "tag: v2" in s.file() and "value: debug" in s.file()

    s.h.step("web-staging-3", s.controller())  # judged again against the new tip: held
    status = s.h.status("web-staging-3")
    assert status["phase"] == "AwaitingApproval"
    assert f"{FILE}:6: env[0].value: changed" in status["message"]
    assert s.promotion_commits("web-staging-3") == []


def test_an_approval_is_for_the_file_it_was_asked_about(tmp_path: Path) -> None:
    s = Stand(tmp_path)
    s.edit_by_hand("value: info", "value: debug")
    s.h.promote("web-staging-3", "staging", "registry.local/web:v3")
    s.h.step("web-staging-3", s.controller())
    assert f"{FILE}:6: env[0].value" in s.h.status("web-staging-3")["message"]
    s.h.decide("web-staging-3", "approve", "lead@x.io")
    s.h.advance(1)

    landing = s.once_before_the_commit("value: debug", "value: trace")
    s.h.step("web-staging-3", s.controller(landing))  # approved; the edit lands; refused
    assert s.promotion_commits("web-staging-3") == []
    s.h.step("web-staging-3", s.controller())  # asked again: the approve was for other bytes
    status = s.h.status("web-staging-3")
    assert status["phase"] == "AwaitingApproval"
    assert status["message"].startswith("the file changed since approval was requested")
    assert f"{FILE}:6: env[0].value" in status["approval"]["reason"]
    s.h.step("web-staging-3", s.controller())  # the earlier approve is judged, and ignored
    ignored = s.h.status("web-staging-3")["approval"]["ignored"]
    assert ignored == ["approve by lead@x.io: made before the approval was requested"]
    assert s.issues.opened == ["web-staging-3", "web-staging-3"]  # asked again, on a new issue
    assert s.issues.told[1][0].startswith("AwaitingApproval: the file changed since approval")
    assert s.h.phase("web-staging-3") == "AwaitingApproval"
    assert s.promotion_commits("web-staging-3") == []

    s.h.decide("web-staging-3", "approve", "lead@x.io")
    s.h.step("web-staging-3", s.controller())
    assert s.h.phase("web-staging-3") == "Committed"
    assert len(s.promotion_commits("web-staging-3")) == 1
    assert "tag: v3" in s.file() and "value: trace" in s.file()


def test_the_reason_for_holding_is_kept_while_the_gate_waits(tmp_path: Path) -> None:
    s = Stand(tmp_path)
    s.edit_by_hand("value: info", "value: debug")
    s.h.promote("web-staging-3", "staging", "registry.local/web:v3")
    for _ in range(3):  # each later step (a watch event, a requeue) keeps saying why
        s.h.step("web-staging-3", s.controller())
        s.h.advance(30)
    status = s.h.status("web-staging-3")
    assert status["message"].startswith("waiting for approve/deny from lead@x.io")
    assert f"(config change: {FILE}:6: env[0].value: changed" in status["message"]
    assert status["approval"]["reason"].startswith(f"{FILE}:6: env[0].value")
