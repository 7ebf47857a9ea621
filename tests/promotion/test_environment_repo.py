"""The repository edge on a real Git repository: a promotion commit changes only the image
key and carries its trailers, is found again by its promotion's name, and the re-commit of
the previous image is found as its revert (the trailer Git convergence also honours)."""

from __future__ import annotations

import subprocess
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pygit2

from headway.controllers.convergence.git import LocalBranch
from headway.model.promotion_pipeline import parse_promotion_pipeline
from headway.model.yamlload import Document
from headway.promotion.classify import config_check
from headway.promotion.environment_repo import GitEnvironment
from headway.promotion.environments import stage_of
from headway.promotion.record import PromotionSpec
from headway.source.git_commits import BotIdentity

VALUES = (
    "# the web app in dev\nimage:\n  repository: registry.local/web\n"
    "  tag: v1  # moved by Headway\nreplicas: 2\n"
)
FIELD_KEY = "image.tag"
PIPELINE = {
    "apiVersion": "headway.dev/v1alpha1",
    "kind": "PromotionPipeline",
    "metadata": {"name": "web", "namespace": "argocd"},
    "spec": {
        "image": "registry.local/web",
        "environments": [
            {
                "name": "dev",
                "application": "web-dev",
                "autoPromote": True,
                "target": {"file": "values-dev.yaml", "helm": {"key": "image.tag"}},
                "hotfix": {
                    "skipAnalysisKey": "rollout.skipAnalysis",
                    "nonceKey": 'podAnnotations["headway.dev/nonce"]',
                },
            },
            {
                "name": "prod",
                "application": "web-prod",
                "target": {"file": "values-prod.yaml", "helm": {"key": "image.tag"}},
                "gate": {"approval": {"required": True, "approvers": ["lead"]}},
            },
        ],
    },
}


def _repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    (path / "values-dev.yaml").write_text(VALUES)
    (path / "values-prod.yaml").write_text(VALUES)
    for args in (
        ["init", "-q", "-b", "main"],
        ["add", "."],
        ["-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "init"],
    ):
        subprocess.run(["git", *args], cwd=path, check=True)
    return path


def _spec(name: str) -> PromotionSpec:
    return PromotionSpec(
        name=name,
        namespace="argocd",
        pipeline="web",
        environment="dev",
        image="registry.local/web:v2",
        author="dev",
        requested_at=datetime(2026, 1, 1, tzinfo=UTC),
    )


def test_commit_find_and_revert(tmp_path: Path) -> None:
    path = _repo(tmp_path)
    pipeline, problems = parse_promotion_pipeline(Document(PIPELINE, "pipeline", 0, 0))
    assert pipeline is not None and not problems
    dev = pipeline.spec.environments[0]
    assert stage_of(pipeline, dev).auto_next == "prod"
    assert stage_of(pipeline, pipeline.spec.environments[1]).previous == "dev"
    writer = LocalBranch(path, "main", BotIdentity("Headway", "headway@localhost"))
    repo = GitEnvironment(writer=writer, env=dev, repository="registry.local/web")
    assert repo.pinned() == "registry.local/web:v1"
    assert repo.find_commit("web-dev-1") == ""

    sha = repo.commit_image("registry.local/web:v2", promotion=_spec("web-dev-1"), previous="")
    assert repo.pinned() == "registry.local/web:v2"
    assert repo.find_commit("web-dev-1") == sha
    assert repo.find_commit("web-dev-2") == ""
    assert (path / "values-dev.yaml").read_text() == VALUES.replace("tag: v1", "tag: v2")
    message = pygit2.Repository(str(path))[sha].message
    assert "Headway-Promotion: web-dev-1" in message
    assert "Headway-Previous-Image: registry.local/web:v1" in message

    revert = repo.revert_image("registry.local/web:v1", promotion=_spec("web-dev-1"), commit=sha)
    assert repo.find_revert(sha) == revert
    assert repo.find_commit("web-dev-1") == sha  # the revert is not the promotion's commit
    assert repo.pinned() == "registry.local/web:v1"
    assert repo.contains(revert, sha) and not repo.contains(sha, revert)


def test_a_hand_edit_since_the_last_promotion_is_a_config_change(tmp_path: Path) -> None:
    path = _repo(tmp_path)
    pipeline, _ = parse_promotion_pipeline(Document(PIPELINE, "pipeline", 0, 0))
    assert pipeline is not None
    writer = LocalBranch(path, "main", BotIdentity("Headway", "headway@localhost"))
    dev = pipeline.spec.environments[0]
    repo = GitEnvironment(
        writer=writer, env=dev, repository="registry.local/web", config_check=config_check(dev)
    )
    assert not repo.exempt()
    repo.commit_image("registry.local/web:v2", promotion=_spec("web-dev-1"), previous="")
    assert repo.config_change() == ""
    values = path / "values-dev.yaml"
    subprocess.run(["git", "checkout", "-q", "main"], cwd=path, check=True)
    values.write_text(values.read_text().replace("replicas: 2", "replicas: 5"))
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qam", "by hand"],
        cwd=path,
        check=True,
    )
    assert "replicas" in repo.config_change()


def test_another_environments_promotion_is_not_this_files_last_promotion(tmp_path: Path) -> None:
    path = _repo(tmp_path)
    pipeline, _ = parse_promotion_pipeline(Document(PIPELINE, "pipeline", 0, 0))
    assert pipeline is not None
    dev, prod = pipeline.spec.environments
    prod = replace(prod, gate=replace(prod.gate, exempt=(FIELD_KEY,)))
    writer = LocalBranch(path, "main", BotIdentity("Headway", "headway@localhost"))
    dev_repo = GitEnvironment(writer=writer, env=dev, repository="registry.local/web")
    prod_repo = GitEnvironment(
        writer=writer, env=prod, repository="registry.local/web", config_check=config_check(prod)
    )
    dev_repo.commit_image("registry.local/web:v2", promotion=_spec("web-dev-1"), previous="")
    assert prod_repo.exempt()
    assert "no earlier promotion" in prod_repo.config_change()  # dev's commit does not count


def test_a_hotfix_marks_the_file_and_the_next_promotion_clears_it(tmp_path: Path) -> None:
    path = _repo(tmp_path)
    pipeline, _ = parse_promotion_pipeline(Document(PIPELINE, "pipeline", 0, 0))
    assert pipeline is not None
    writer = LocalBranch(path, "main", BotIdentity("Headway", "headway@localhost"))
    repo = GitEnvironment(
        writer=writer, env=pipeline.spec.environments[0], repository="registry.local/web"
    )
    hotfix = replace(_spec("web-dev-hot"), image="registry.local/web:v1", hotfix_reason="stuck")
    sha = repo.commit_image("registry.local/web:v1", promotion=hotfix, previous="")
    marked = (path / "values-dev.yaml").read_text()
    assert "skipAnalysis: true" in marked and "web-dev-hot" in marked
    message = pygit2.Repository(str(path))[sha].message
    assert "Headway-Hotfix: stuck (nonce web-dev-hot)" in message
    repo.commit_image("registry.local/web:v2", promotion=_spec("web-dev-2"), previous="")
    assert (path / "values-dev.yaml").read_text() == VALUES.replace("tag: v1", "tag: v2")


def test_a_hand_commit_racing_the_promotion_is_kept_and_the_promotion_lands_on_it(
    tmp_path: Path,
) -> None:
    """The compare-and-swap of the branch refuses the promotion's first ref update (the hand
    commit landed after the promotion's commit was built); the edge builds it again on the
    new tip: both commits are on the branch, the promotion's on top."""
    path = _repo(tmp_path)
    pipeline, _ = parse_promotion_pipeline(Document(PIPELINE, "pipeline", 0, 0))
    assert pipeline is not None
    hand: list[str] = []

    def hand_commit_once(point: str) -> None:
        if point == "built" and not hand:
            (path / "README").write_text("a hand edit\n")
            subprocess.run(["git", "add", "README"], cwd=path, check=True)
            subprocess.run(
                ["git", "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "hand"],
                cwd=path,
                check=True,
            )
            hand.append(str(pygit2.Repository(str(path)).head.target))

    writer = LocalBranch(path, "main", BotIdentity(), race_hook=hand_commit_once)
    repo = GitEnvironment(
        writer=writer, env=pipeline.spec.environments[0], repository="registry.local/web"
    )
    sha = repo.commit_image("registry.local/web:v2", promotion=_spec("web-dev-1"), previous="")
    git = pygit2.Repository(str(path))
    [hand_sha] = hand
    assert str(git.head.target) == sha
    assert [str(p) for p in git[sha].parent_ids] == [hand_sha]
    assert repo.pinned() == "registry.local/web:v2"
