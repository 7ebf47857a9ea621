"""Fetches do not pile up open files and packs in the Git cache. Each fetch writes a pack
and libgit2 never repacks: without bounds it kept every pack it had read open, one file
descriptor per fetch (1,207 after 1,200 fetches: a controller under the common limit of
1,024 descriptors would fail to open files within two days of 3-minute polls), and a lookup
of an object in none of the packs read every pack's index (4-7 ms after 1,200 fetches).

`GitCache` bounds libgit2's open packs (`OPEN_PACKS`), unless the process set its own bound;
past `REPACK_AT` packs a fetch writes one pack of every object and removes the others. Every
commit stays readable, through a handle opened before (libgit2 lists the packs again when
an object is not where it looked) and through a new one; a pack that cannot be written
leaves the cache as it was."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pygit2
import pytest

from headway.source import git
from headway.source.git import GitCache, GitRepository


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


@pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="open files are counted in /proc/self/fd"
)
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


def _packs(repository: GitRepository) -> list[Path]:
    return sorted((Path(repository.repo.path) / "objects" / "pack").glob("*.pack"))


def _read_all(repo: pygit2.Repository, commits: list[pygit2.Oid]) -> list[bytes]:
    found = []
    for commit in commits:
        tree = repo[commit].peel(pygit2.Tree)
        blob = repo[next(iter(tree)).id]
        assert isinstance(blob, pygit2.Blob)
        found.append(blob.data)
    return found


@pytest.fixture
def filled(tmp_path: Path) -> tuple[pygit2.Repository, GitRepository, list[pygit2.Oid]]:
    remote = pygit2.init_repository(str(tmp_path / "remote.git"), bare=True)
    repository = GitCache(tmp_path / "cache").repository((tmp_path / "remote.git").as_uri())
    commits = []
    for n in range(6):
        commits.append(_commit(remote, n))
        repository.fetch()
    return remote, repository, commits


def test_past_the_limit_a_fetch_packs_every_object_into_one(
    monkeypatch: pytest.MonkeyPatch,
    filled: tuple[pygit2.Repository, GitRepository, list[pygit2.Oid]],
) -> None:
    remote, repository, commits = filled
    assert len(_packs(repository)) == 6
    earlier = pygit2.Repository(repository.repo.path)  # a reader opened before
    assert _read_all(earlier, commits[:2]) == _read_all(remote, commits[:2])
    monkeypatch.setattr(git, "REPACK_AT", 5)
    commits.append(_commit(remote, 6))
    repository.fetch()
    assert len(_packs(repository)) == 1
    expected = _read_all(remote, commits)
    assert _read_all(repository.repo, commits) == expected
    assert _read_all(earlier, commits) == expected
    assert _read_all(pygit2.Repository(repository.repo.path), commits) == expected
    assert repository.resolve(remote.head.shorthand) == str(commits[-1])
    commits.append(_commit(remote, 7))
    repository.fetch()  # one more pack: under the limit again
    assert len(_packs(repository)) == 2
    assert _read_all(repository.repo, commits)[-1] == _read_all(remote, commits)[-1]


def test_a_pack_that_cannot_be_written_leaves_the_cache_as_it_was(
    monkeypatch: pytest.MonkeyPatch,
    filled: tuple[pygit2.Repository, GitRepository, list[pygit2.Oid]],
) -> None:
    remote, repository, commits = filled

    def refuse(self: pygit2.Repository, *args: object, **kwargs: object) -> int:
        raise pygit2.GitError("no space left on device")

    monkeypatch.setattr(git, "REPACK_AT", 5)
    monkeypatch.setattr(pygit2.Repository, "pack", refuse)
    commits.append(_commit(remote, 6))
    repository.fetch()  # the fetch itself succeeds
    assert len(_packs(repository)) == 7
    assert _read_all(repository.repo, commits) == _read_all(remote, commits)
