"""The Git-convergence controller of `headway serve` pushes its revert to a private remote
(a real smart-HTTP Git server wanting basic auth) with the repository Secret's credentials,
through the Git cache it shares with the Application controller."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from convergence_harness import Harness
from gitwork import WorkRepo, rollout_yaml

from conftest import require_program
from headway.clock import VirtualClock
from headway.engine import Engine, EngineSettings, Loop
from source.git_http import GitHttpServer

USER, TOKEN = "release-bot", "push-token-123"


def repository_secret(url: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": "gitops",
            "namespace": "argocd",
            "labels": {"argocd.argoproj.io/secret-type": "repository"},
        },
        "stringData": {"url": url, "username": USER, "password": TOKEN},
    }


@pytest.fixture
def remote(tmp_path: Path) -> WorkRepo:
    repo = WorkRepo(tmp_path / "gitops.git", bare=True)
    repo.commit({"apps/web/rollout.yaml": rollout_yaml("v2")}, "release web v2")
    repo.commit({"apps/web/rollout.yaml": rollout_yaml("v3")}, "release web v3")
    return repo


@pytest.fixture
def server(tmp_path: Path, remote: WorkRepo) -> Iterator[GitHttpServer]:
    require_program("git")
    served = GitHttpServer(tmp_path, username=USER, password=TOKEN)
    yield served
    served.close()


@pytest.fixture
async def harness(
    tmp_path: Path, clock: VirtualClock, server: GitHttpServer
) -> AsyncIterator[Harness]:
    harness = Harness(tmp_path, clock, server.url("gitops.git"))
    async with httpx2.AsyncClient() as http:
        settings = EngineSettings(
            state_dir=tmp_path / "state", loops=frozenset({Loop.GIT_CONVERGENCE})
        )
        engine = Engine(cluster=harness.cluster, clock=clock, http=http, settings=settings)
        harness.controller = engine.controller("git-convergence")  # type: ignore[assignment]
        yield harness


def test_revert_is_pushed_with_the_repository_secret(
    harness: Harness, remote: WorkRepo, server: GitHttpServer
) -> None:
    release = remote.tip()
    harness.apply(repository_secret(harness.repo_url))
    harness.abort(stable="shop/web:v2", failed="shop/web:v3")
    harness.step()
    assert remote.tip() != release
    assert remote.changed_lines(remote.tip()) == [
        "-          image: shop/web:v3   # the release",
        "+          image: shop/web:v2   # the release",
    ]
    expected = "Basic " + base64.b64encode(f"{USER}:{TOKEN}".encode()).decode()
    assert expected in server.seen
    assert harness.condition()["status"] == "True"


def test_without_credentials_nothing_is_pushed_and_the_reason_is_clear(
    harness: Harness, remote: WorkRepo
) -> None:
    release = remote.tip()
    harness.abort(stable="shop/web:v2", failed="shop/web:v3")
    harness.step()
    assert remote.tip() == release
    messages = " ".join(message for _, _, message in harness.events())
    assert "requires credentials and none are configured" in messages
