"""GitCache against a real smart-HTTP Git server with basic auth, credentials asked per use."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import require_program
from headway.source.errors import AuthenticationFailed
from headway.source.git import GitCache, GitCredentials
from source.git_http import GitHttpServer
from source.gitrepos import Upstream

USER, TOKEN = "bot", "s3cret-token"


@pytest.fixture
def server(tmp_path: Path, upstream: Upstream) -> Iterator[GitHttpServer]:
    require_program("git")
    served = GitHttpServer(tmp_path, username=USER, password=TOKEN)
    yield served
    served.close()


def test_credentials_for_is_asked_on_every_use(
    tmp_path: Path, server: GitHttpServer, upstream: Upstream
) -> None:
    current: list[GitCredentials | None] = [None]
    asked: list[str] = []

    def credentials_for(url: str) -> GitCredentials | None:
        asked.append(url)
        return current[0]

    cache = GitCache(tmp_path / "cache", credentials_for=credentials_for)
    url = server.url("upstream.git")
    with pytest.raises(AuthenticationFailed, match="none are configured"):
        cache.repository(url).fetch()
    current[0] = GitCredentials(username=USER, password=TOKEN)  # e.g. a Secret was added
    repo = cache.repository(url)
    repo.fetch()
    assert repo.resolve("main") == upstream.tip("main")
    assert asked == [url, url]
    expected = "Basic " + base64.b64encode(f"{USER}:{TOKEN}".encode()).decode()
    assert expected in server.seen


def test_push_uses_the_same_credentials(
    tmp_path: Path, server: GitHttpServer, upstream: Upstream
) -> None:
    creds = GitCredentials(username=USER, password=TOKEN)
    cache = GitCache(tmp_path / "cache", credentials_for=lambda url: creds)
    repo = cache.repository(server.url("upstream.git"))
    repo.fetch()
    result = repo.commit_edits(branch="main", edits={"README.md": b"# pushed\n"}, message="m")
    repo.push("main")
    assert upstream.tip("main") == result.sha
    assert upstream.read("main", "README.md") == b"# pushed\n"


def test_wrong_password_is_refused_clearly(tmp_path: Path, server: GitHttpServer) -> None:
    wrong = GitCredentials(username=USER, password="not-it")
    cache = GitCache(tmp_path / "cache", credentials_for=lambda url: wrong)
    with pytest.raises(AuthenticationFailed, match="refused the configured credentials"):
        cache.repository(server.url("upstream.git")).fetch()


def test_explicit_credentials_still_win(tmp_path: Path, server: GitHttpServer) -> None:
    cache = GitCache(tmp_path / "cache", credentials_for=lambda url: None)
    repo = cache.repository(server.url("upstream.git"), GitCredentials(USER, TOKEN))
    repo.fetch()
    assert "refs/remotes/origin/main" in repo.repo.references
