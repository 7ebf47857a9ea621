"""A writer of the Git cache killed mid-write leaves libgit2's `<ref>.lock` file behind; the
next holder of the repository's lock removes it (source/git_lock.py), so fetches go on.

Before: `headway serve` killed while libgit2 wrote `refs/remotes/origin/HEAD` left
`HEAD.lock`, and every later fetch of that repository failed with "failed to lock file ...
HEAD.lock" — the Application never saw a new commit again (found by the random-kill test,
tests/e2e_rollouts/test_kill_loop.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from headway.source.git import GitCache
from headway.source.git_lock import LOCK_FILE, stale_lock_files
from source.gitrepos import make_upstream

# Where libgit2 leaves them: a ref, a remote-tracking ref, packed-refs, the config.
LEFT_BEHIND = (
    "refs/remotes/origin/HEAD.lock",
    "refs/heads/main.lock",
    "packed-refs.lock",
    "config.lock",
)


@pytest.mark.parametrize("left", LEFT_BEHIND)
def test_a_fetch_after_a_writer_died_mid_write_goes_on(tmp_path: Path, left: str) -> None:
    upstream = make_upstream(tmp_path / "upstream.git", {"app/a.yaml": "a: 1\n"})
    repository = GitCache(tmp_path / "cache").repository(upstream.url)
    repository.fetch()
    (repository.path / left).parent.mkdir(parents=True, exist_ok=True)
    (repository.path / left).write_text("half-written by a killed process\n")
    tip = upstream.commit("main", {"app/a.yaml": "a: 2\n"}, "second")
    repository.fetch()  # the same long-lived cache object: another process had died
    assert repository.resolve("main") == tip
    assert not (repository.path / left).exists()
    again = GitCache(tmp_path / "cache").repository(upstream.url)  # and a restarted one
    again.fetch()
    assert again.resolve("main") == tip


def test_only_libgit2s_lock_files_are_stale(tmp_path: Path) -> None:
    upstream = make_upstream(tmp_path / "upstream.git", {"app/a.yaml": "a: 1\n"})
    repository = GitCache(tmp_path / "cache").repository(upstream.url)
    repository.fetch()
    (repository.path / "refs/tags").mkdir(parents=True, exist_ok=True)
    (repository.path / "refs/tags/v1.lock").write_text("x")
    (repository.path / "objects/info/alternates.lock").write_text("x")  # not libgit2's refs
    found = {p.relative_to(repository.path).as_posix() for p in stale_lock_files(repository.path)}
    assert found == {"refs/tags/v1.lock"}
    assert (repository.path / LOCK_FILE).exists()  # the lock itself is never one of them
