"""Build real Git repositories (pygit2) from fixture directories, one commit per state."""

from __future__ import annotations

import shutil
from pathlib import Path

import pygit2

ORIGIN = "https://github.com/example/fixtures.git"


def _replace_worktree(root: Path, source: Path) -> None:
    for child in root.iterdir():
        if child.name == ".git":
            continue
        shutil.rmtree(child) if child.is_dir() else child.unlink()
    shutil.copytree(source, root, dirs_exist_ok=True)


def commit_states(root: Path, *states: Path) -> pygit2.Repository:
    """A repository at `root` with one commit per state directory, `origin` set to ORIGIN."""
    repo = pygit2.init_repository(str(root), initial_head="main")
    repo.remotes.create("origin", ORIGIN)
    signature = pygit2.Signature("Headway Test", "test@headway.invalid", 1_700_000_000, 0)
    parents: list[pygit2.Oid] = []
    for number, state in enumerate(states):
        _replace_worktree(root, state)
        repo.index.add_all()
        repo.index.write()
        tree = repo.index.write_tree()
        oid = repo.create_commit("HEAD", signature, signature, f"state {number}", tree, parents)
        parents = [oid]
    return repo
