"""Fetches do not keep a file open per pack. Each fetch writes a pack file into the cache,
and libgit2 never repacks; without a bound it kept every pack it had read open, one file
descriptor per fetch (1,207 after 1,200 fetches: a controller under the common limit of
1,024 descriptors would fail to open files within two days of 3-minute polls). `GitCache`
bounds libgit2's open packs (`OPEN_PACKS`), unless the process set its own bound."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pygit2
import pytest

from headway.source import git
from headway.source.git import GitCache

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="open files are counted in /proc/self/fd"
)


@pytest.fixture
def unbounded() -> Iterator[None]:
    """libgit2's own default, as in a new process; the process's setting is put back."""
    before = pygit2.settings.mwindow_file_limit
    pygit2.settings.mwindow_file_limit = 0
    yield
    pygit2.settings.mwindow_file_limit = before


def _commit(repo: pygit2.Repository, n: int) -> pygit2.Oid:
    blob = repo.create_blob(f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c{n}}}\n".encode())
    builder = repo.TreeBuilder()
    builder.insert(f"cm-{n}.yaml", blob, pygit2.enums.FileMode.BLOB)
    sig = pygit2.Signature("t", "t@example.com")
    parents = [] if repo.head_is_unborn else [repo.head.target]
    return repo.create_commit("HEAD", sig, sig, f"c{n}", builder.write(), parents)


def _open_packs(root: Path) -> int:
    found = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        found += target.startswith(str(root)) and target.endswith(".pack")
    return found


def test_fetches_keep_at_most_the_bound_of_packs_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, unbounded: None
) -> None:
    monkeypatch.setattr(git, "OPEN_PACKS", 6)
    remote = pygit2.init_repository(str(tmp_path / "remote.git"), bare=True)
    cache_root = tmp_path / "cache"
    repository = GitCache(cache_root).repository((tmp_path / "remote.git").as_uri())
    commits = []
    for n in range(30):
        commits.append(_commit(remote, n))
        repository.fetch()
    for commit in commits:  # every pack read: each commit's blob came in its own fetch
        tree = repository.repo[commit].peel(pygit2.Tree)
        blob = repository.repo[next(iter(tree)).id]
        assert isinstance(blob, pygit2.Blob) and blob.data.startswith(b"apiVersion")
    assert len(list((cache_root).rglob("*.pack"))) >= 30
    assert _open_packs(cache_root) <= 6
    assert pygit2.settings.mwindow_file_limit == 6


def test_a_bound_the_process_set_is_kept(tmp_path: Path, unbounded: None) -> None:
    pygit2.settings.mwindow_file_limit = 500
    GitCache(tmp_path / "cache")
    assert pygit2.settings.mwindow_file_limit == 500
