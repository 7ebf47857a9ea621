"""The gate exemption on a real repository: an image change may skip the gate only where the
environment exempts the image key, only once a promotion gave a known-good file to compare
with, and never when a hand edit landed in the same file since."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from headway.controllers.convergence.git import LocalBranch
from headway.model.promotion_pipeline import Environment, parse_promotion_pipeline
from headway.model.yamlload import Document
from headway.promotion.classify import config_check
from headway.promotion.environment_repo import GitEnvironment
from headway.promotion.record import PromotionSpec
from headway.source.git_commits import BotIdentity

VALUES = """\
# the web app in prod
image:
  repository: registry.local/web
  tag: v1  # moved by Headway
env:
  - name: MODE
    value: live
"""


def _environment(exempt: list[str]) -> Environment:
    raw: dict[str, Any] = {
        "apiVersion": "headway.dev/v1alpha1",
        "kind": "PromotionPipeline",
        "metadata": {"name": "web", "namespace": "argocd"},
        "spec": {
            "image": "registry.local/web",
            "environments": [
                {
                    "name": "prod",
                    "application": "web-prod",
                    "target": {"file": "values-prod.yaml", "helm": {"key": "image.tag"}},
                    "gate": {
                        "approval": {"required": True, "approvers": ["lead"]},
                        "exempt": exempt,
                    },
                    "hotfix": {"skipAnalysisKey": "skipAnalysis", "nonceKey": "nonce"},
                }
            ],
        },
    }
    pipeline, problems = parse_promotion_pipeline(Document(raw, "pipeline", 0, 0))
    assert pipeline is not None and not problems, problems
    return pipeline.spec.environments[0]


def _git(path: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@x", *args], cwd=path, check=True
    )


def _repo(tmp_path: Path, env: Environment) -> tuple[Path, GitEnvironment]:
    path = tmp_path / "repo"
    path.mkdir(parents=True)
    (path / "values-prod.yaml").write_text(VALUES)
    _git(path, "init", "-q", "-b", "main")
    _git(path, "add", ".")
    _git(path, "commit", "-qm", "init")
    writer = LocalBranch(path, "main", BotIdentity())
    repo = GitEnvironment(
        writer=writer, env=env, repository="registry.local/web", config_check=config_check(env)
    )
    return path, repo


def _spec(name: str, image: str) -> PromotionSpec:
    return PromotionSpec(
        name=name,
        namespace="argocd",
        pipeline="web",
        environment="prod",
        image=image,
        author="dev",
        requested_at=datetime(2026, 1, 1, tzinfo=UTC),
    )


def test_an_exempt_image_change_skips_the_gate_only_after_a_known_good_promotion(
    tmp_path: Path,
) -> None:
    _, repo = _repo(tmp_path, _environment(["image.tag"]))
    assert repo.exempt()
    assert repo.config_change() == "no earlier promotion to compare the file with"
    repo.commit_image("registry.local/web:v2", promotion=_spec("p1", "v2"), previous="")
    assert repo.config_change() == ""  # the next image change alone may skip the gate


def test_a_hand_edit_since_the_last_promotion_holds_the_next_one(tmp_path: Path) -> None:
    path, repo = _repo(tmp_path, _environment(["image.tag"]))
    repo.commit_image("registry.local/web:v2", promotion=_spec("p1", "v2"), previous="")
    text = (path / "values-prod.yaml").read_text()
    (path / "values-prod.yaml").write_text(text.replace("value: live", "value: debug"))
    _git(path, "commit", "-qam", "debug mode in prod, quickly")
    assert repo.config_change() == (
        "values-prod.yaml:7: env[0].value: changed; "
        "not a key the automation writes and the environment exempts"
    )


def test_exempting_only_the_nonce_never_lets_an_image_change_skip(tmp_path: Path) -> None:
    _, repo = _repo(tmp_path, _environment(["nonce"]))
    assert not repo.exempt()
    _, gated = _repo(tmp_path / "other", _environment([]))
    assert not gated.exempt()
