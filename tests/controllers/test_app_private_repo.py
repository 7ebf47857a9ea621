"""Private repositories: the serve wiring reads Argo CD repository Secrets from the store and
the Application controller fetches from a real smart-HTTP Git server that wants basic auth."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from app_harness import (
    APPS_NS,
    PERMISSIVE_DEFAULT_PROJECT,
    Remote,
    application,
    config_map,
    manifests,
)

from conftest import require_program
from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
from headway.controllers.manager import ObjectKey
from headway.controllers.repo_credentials import RepoCredentialsProvider
from headway.engine import Engine, EngineSettings, Loop
from source.git_http import GitHttpServer

USER, TOKEN = "ci-bot", "glpat-private-token"


def repository_secret(url: str, password: str, name: str = "private-repo") -> dict[str, Any]:
    def b64(text: str) -> str:
        return base64.b64encode(text.encode()).decode()

    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": name,
            "namespace": APPS_NS,
            "labels": {"argocd.argoproj.io/secret-type": "repository"},
        },
        "data": {
            "type": b64("git"),
            "url": b64(url),
            "username": b64(USER),
            "password": b64(password),
        },
    }


@pytest.fixture
def server(tmp_path: Path) -> Iterator[GitHttpServer]:
    require_program("git")
    remote = Remote(tmp_path / "remote.git")
    remote.commit({"app/cm.yaml": manifests(config_map("settings"))}, "initial")
    served = GitHttpServer(tmp_path, username=USER, password=TOKEN)
    yield served
    served.close()


@pytest.fixture
def store(tmp_path: Path, clock: VirtualClock) -> Iterator[LocalCluster]:
    (tmp_path / "state").mkdir()
    with LocalCluster(tmp_path / "state" / "cluster.db", clock) as cluster:
        for namespace in (APPS_NS, "demo"):
            cluster.apply(
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
                field_manager="test",
            )
        cluster.apply(dict(PERMISSIVE_DEFAULT_PROJECT), field_manager="admin")
        yield cluster


@pytest.fixture
async def engine(tmp_path: Path, store: LocalCluster, clock: VirtualClock) -> AsyncIterator[Engine]:
    loops = frozenset({Loop.APPLICATIONS, Loop.GIT_CONVERGENCE})
    settings = EngineSettings(state_dir=tmp_path / "state", loops=loops)
    async with httpx2.AsyncClient() as http:
        yield Engine(cluster=store, clock=clock, http=http, settings=settings)


def _conditions(store: LocalCluster) -> str:
    app = store.get("argoproj.io/v1alpha1", "Application", "private", APPS_NS)
    return " ".join(
        str(c.get("message")) for c in (app.get("status") or {}).get("conditions") or []
    )


def test_application_fetches_with_repository_secret_and_fails_clearly_without(
    engine: Engine, store: LocalCluster, server: GitHttpServer
) -> None:
    url = server.url("remote.git")
    store.apply(application("private", url, path="app", automated={}), field_manager="test")
    steps = engine.controller("applications")
    key = ObjectKey(APPS_NS, "private")

    steps.step(key)
    assert "requires credentials and none are configured" in _conditions(store)
    assert url in _conditions(store)
    assert all(h == "" for h in server.seen)

    store.apply(repository_secret(url, TOKEN), field_manager="test")
    for _ in range(5):
        steps.step(key)
    assert store.get("v1", "ConfigMap", "settings", "demo")["data"] == {"k": "settings"}
    expected = "Basic " + base64.b64encode(f"{USER}:{TOKEN}".encode()).decode()
    assert expected in server.seen
    assert TOKEN not in _conditions(store)


def test_a_changed_secret_is_used_on_the_next_fetch(
    engine: Engine, store: LocalCluster, server: GitHttpServer
) -> None:
    url = server.url("remote.git")
    store.apply(repository_secret(url, "revoked-token"), field_manager="test")
    repo = engine.git.repository(url)
    with pytest.raises(Exception, match="refused the configured credentials"):
        repo.fetch()
    store.apply(repository_secret(url, TOKEN), field_manager="test")  # rotated
    engine.git.repository(url).fetch()
    assert "refs/remotes/origin/main" in repo.repo.references


def test_serve_shares_one_git_cache_between_the_controllers(engine: Engine) -> None:
    convergence = engine.controller("git-convergence")
    assert convergence._git is engine.git  # type: ignore[attr-defined]
    sources = engine.controller("application-sources")
    assert sources._reader._git is engine.git  # type: ignore[attr-defined]


def test_provider_rereads_on_change_and_reports_bad_secrets_without_values(
    store: LocalCluster,
) -> None:
    lines: list[str] = []
    provider = RepoCredentialsProvider(store, report=lines.append)
    assert provider("https://git.example.com/org/app") is None
    store.apply(repository_secret("https://git.example.com/org/app", "first"), field_manager="t")
    assert (provider("https://git.example.com/org/app.git") or _none()).password == "first"
    store.apply(repository_secret("https://git.example.com/org/app", "second"), field_manager="t")
    assert (provider("https://git.example.com/org/app") or _none()).password == "second"
    bad = repository_secret("https://git.example.com/org/bad", "hunter2", name="bad")
    bad["data"]["insecure"] = base64.b64encode(b"perhaps").decode()
    store.apply(bad, field_manager="t")
    provider("https://git.example.com/org/app")
    provider("https://git.example.com/org/app")
    assert len(lines) == 1 and "argocd/bad" in lines[0] and "'insecure'" in lines[0]
    assert "hunter2" not in lines[0] and "perhaps" not in lines[0]


def _none() -> Any:
    raise AssertionError("no credentials found")


def test_provider_forgets_deleted_and_unlabelled_secrets(store: LocalCluster) -> None:
    provider = RepoCredentialsProvider(store, report=lambda line: None)
    url = "https://git.example.com/org/app"
    store.apply(repository_secret(url, "first"), field_manager="t")
    store.apply(repository_secret(url + "-2", "other", name="second"), field_manager="t")
    assert provider(url) is not None and provider(url + "-2") is not None
    store.delete("v1", "Secret", "private-repo", APPS_NS)
    assert provider(url) is None
    unlabelled = repository_secret(url + "-2", "other", name="second")
    unlabelled["metadata"]["labels"] = {"team": "x"}
    store.apply(unlabelled, field_manager="t")
    assert provider(url + "-2") is None


def test_provider_follows_the_ca_config_map_as_it_changes(store: LocalCluster) -> None:
    def config_map(data: dict[str, str]) -> dict[str, Any]:
        meta = {"name": "argocd-tls-certs-cm", "namespace": APPS_NS}
        return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}

    provider = RepoCredentialsProvider(store, report=_unexpected)
    url = "https://charts.corp.example:8443/stable"
    assert provider.helm_options(url).ca_data is None
    store.apply(config_map({"charts.corp.example": "FIRST CA"}), field_manager="t")
    assert provider.helm_options(url).ca_data == "FIRST CA"
    assert provider.helm_options("https://other.example/stable").ca_data is None
    store.apply(config_map({"charts.corp.example": "SECOND CA"}), field_manager="t")
    assert provider.helm_options(url).ca_data == "SECOND CA"
    store.delete("v1", "ConfigMap", "argocd-tls-certs-cm", APPS_NS)
    assert provider.helm_options(url).ca_data is None


def _unexpected(line: str) -> None:
    raise AssertionError(line)
