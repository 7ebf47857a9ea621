"""`LocalBranch.write` moves the branch by compare-and-swap: a commit that lands between
Headway's read of the tip and its ref update (a hand commit, another writer) is never
overwritten. Each race is opened at its exact point through the writer's `race_hook`."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2
import pytest

from headway.controllers.convergence.git import BranchMoved, LocalBranch
from headway.source.git_commits import BotIdentity


def _git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@x", *args],
        cwd=repo,
        check=check,
        capture_output=True,
        text=True,
    )


def _repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    (path / "values.yaml").write_text("tag: v1\n")
    _git(path, "init", "-q", "-b", "main")
    _git(path, "add", ".")
    _git(path, "commit", "-qm", "init")
    return path


def _hand_commit(repo: Path, text: str) -> tuple[str, bool]:
    """A person's commit on main, made with plumbing so the working tree is not involved:
    its sha, and whether Git said the branch now points at it."""
    parent = _git(repo, "rev-parse", "main").stdout.strip()
    tree = _git(repo, "rev-parse", "main^{tree}").stdout.strip()
    sha = _git(repo, "commit-tree", tree, "-p", parent, "-m", text).stdout.strip()
    moved = _git(repo, "update-ref", "refs/heads/main", sha, parent, check=False)
    return sha, moved.returncode == 0


def _reachable(repo: Path, sha: str) -> bool:
    return _git(repo, "merge-base", "--is-ancestor", sha, "main", check=False).returncode == 0


def test_a_commit_landing_after_the_build_is_kept_and_the_write_is_refused(
    tmp_path: Path,
) -> None:
    repo = _repo(tmp_path)
    landed: list[tuple[str, bool]] = []

    def hand_push_at(point: str) -> None:
        if point == "built" and not landed:
            landed.append(_hand_commit(repo, "hand edit"))

    branch = LocalBranch(repo, "main", BotIdentity(), race_hook=hand_push_at)
    tip = branch.refresh()
    with pytest.raises(BranchMoved, match="moved"):
        branch.write(parent=tip, edits={"values.yaml": b"tag: v2\n"}, message="promote v2")
    [(hand, moved)] = landed
    assert moved and _reachable(repo, hand)

    # The caller builds again on the new tip: both commits are on the branch.
    branch = LocalBranch(repo, "main", BotIdentity())
    ours = branch.write(
        parent=branch.refresh(), edits={"values.yaml": b"tag: v2\n"}, message="promote v2"
    )
    assert _reachable(repo, hand) and _reachable(repo, ours)
    assert pygit2.Repository(str(repo)).revparse_single(f"{ours}^").id == pygit2.Oid(hex=hand)


def test_a_writer_between_the_check_and_the_update_cannot_move_the_branch(
    tmp_path: Path,
) -> None:
    """The old check-then-write lost the hand commit here: it reported success and was
    overwritten. Under the lock Git refuses it instead, and the person can try again."""
    repo = _repo(tmp_path)
    landed: list[tuple[str, bool]] = []

    def hand_push_at(point: str) -> None:
        if point == "locked":
            landed.append(_hand_commit(repo, "hand edit"))

    branch = LocalBranch(repo, "main", BotIdentity(), race_hook=hand_push_at)
    ours = branch.write(
        parent=branch.refresh(), edits={"values.yaml": b"tag: v2\n"}, message="promote v2"
    )
    [(hand, moved)] = landed
    assert _reachable(repo, ours)
    # Never both "your commit is on main" and a branch that lost it.
    assert not moved or _reachable(repo, hand), "a commit Git reported landed was overwritten"
    assert not moved


def test_a_branch_locked_by_another_writer_is_branch_moved_not_overwritten(
    tmp_path: Path,
) -> None:
    repo = _repo(tmp_path)
    lock = repo / ".git" / "refs" / "heads" / "main.lock"
    branch = LocalBranch(repo, "main", BotIdentity())
    tip = branch.refresh()
    lock.write_text(tip + "\n")  # another Git process in the middle of its own update
    with pytest.raises(BranchMoved, match="could not be locked"):
        branch.write(parent=tip, edits={"values.yaml": b"tag: v2\n"}, message="promote v2")
    assert branch.refresh() == tip
    lock.unlink()
    assert branch.write(parent=tip, edits={"values.yaml": b"tag: v2\n"}, message="v2") != tip
