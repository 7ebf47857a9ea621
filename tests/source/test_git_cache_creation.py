"""A cached repository is created under its lock and repaired when a creator was killed
half-way (source/git.py `GitRepository`): a directory libgit2 cannot open yet is completed,
never mistaken for a repository that contains it, and a second creator waits for the first."""

from __future__ import annotations

import threading
from pathlib import Path

import pygit2

from headway.source import git_lock
from headway.source.git import GitRepository
from headway.source.git_lock import RepositoryLock
from source.gitrepos import make_upstream


def _half_created(path: Path) -> None:
    """What a creator killed after libgit2 wrote HEAD leaves behind."""
    path.mkdir(parents=True)
    (path / "HEAD").write_text("ref: refs/heads/main\n")


def test_a_half_created_cache_is_completed_and_fetches(tmp_path: Path) -> None:
    upstream = make_upstream(tmp_path / "upstream.git", {"app/a.yaml": "a: 1\n"})
    cache = tmp_path / "cache" / "repo"
    _half_created(cache)
    repo = GitRepository(upstream.url, cache)
    repo.fetch()
    assert Path(repo.repo.path).resolve() == cache.resolve()
    assert repo.repo.remotes["origin"].url == upstream.url


def test_a_cache_inside_another_work_tree_is_not_that_work_tree(tmp_path: Path) -> None:
    outer = pygit2.init_repository(str(tmp_path / "outer"))
    cache = tmp_path / "outer" / "cache" / "repo"
    _half_created(cache)
    repo = GitRepository("https://git.example.com/app.git", cache)
    assert Path(repo.repo.path).resolve() == cache.resolve()
    assert "origin" not in outer.remotes.names()  # the outer repository was left alone


def test_a_second_creator_waits_for_the_first(tmp_path: Path) -> None:
    cache = tmp_path / "cache" / "repo"
    _half_created(cache)
    first = RepositoryLock(cache)  # another creator, half-way, holding the lock
    waiting = threading.Event()
    git_lock_hook = git_lock.on_contended
    git_lock.on_contended = lambda _file: waiting.set()
    made: list[GitRepository] = []
    try:
        with first:
            second = threading.Thread(
                target=lambda: made.append(GitRepository("https://g.example/a.git", cache))
            )
            second.start()
            assert waiting.wait(timeout=30), "the second creator did not wait for the lock"
            assert not made
            pygit2.init_repository(str(cache), bare=True)  # the first creator finishes
        second.join(timeout=30)
    finally:
        git_lock.on_contended = git_lock_hook
    assert made and Path(made[0].repo.path).resolve() == cache.resolve()
