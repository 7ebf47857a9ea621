"""Fixtures: an upstream repository with one commit, a cache, a fetched repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from headway.source.git import GitCache, GitRepository
from source.gitrepos import Upstream, make_upstream


@pytest.fixture
def upstream(tmp_path: Path) -> Upstream:
    return make_upstream(
        tmp_path / "upstream.git",
        {"apps/checkout/rollout.yaml": "kind: Rollout\n", "README.md": "# infra\n"},
    )


@pytest.fixture
def cache(tmp_path: Path) -> GitCache:
    return GitCache(tmp_path / "cache")


@pytest.fixture
def fetched(cache: GitCache, upstream: Upstream) -> GitRepository:
    repo = cache.repository(upstream.url)
    repo.fetch()
    return repo
