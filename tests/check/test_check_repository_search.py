"""`headway check` looks for the Git repository around the checked directory without loading
pygit2 where libgit2 could find none, and finds the same repositories libgit2 finds.

Differential: over work trees, their subdirectories, a bare repository, a linked worktree (a
`.git` file), a link into a repository, a directory holding a stray `HEAD` and plain
directories, `_repository` opens a repository exactly where `pygit2.Repository` does. A check
of a directory outside any repository, in a new process, does not import pygit2.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2
import pytest

from headway.cli.check import _may_be_in_repository, _repository
from import_probe import run_headway

CONFIG_MAP = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: '1'}\n"


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def _layouts(root: Path) -> dict[str, Path]:
    work = root / "work"
    (work / "apps" / "deep").mkdir(parents=True)
    (work / "apps" / "settings.yaml").write_text(CONFIG_MAP)
    _git("init", "-q", cwd=work)
    _git("add", "-A", cwd=work)
    _git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "one", cwd=work)
    _git("worktree", "add", "-q", str(root / "linked"), cwd=work)
    _git("clone", "-q", "--bare", str(work), str(root / "bare.git"), cwd=root)
    plain = root / "plain" / "apps"
    plain.mkdir(parents=True)
    (plain / "settings.yaml").write_text(CONFIG_MAP)
    stray = root / "stray"
    stray.mkdir()
    (stray / "HEAD").write_text("not a repository\n")
    (root / "link-in").symlink_to(work / "apps")
    return {
        "work tree": work,
        "subdirectory": work / "apps" / "deep",
        "linked worktree": root / "linked" / "apps",
        "bare": root / "bare.git",
        "inside bare": root / "bare.git" / "refs",
        "link into a repository": root / "link-in",
        "plain": plain,
        "stray HEAD": stray,
    }


def _libgit2_finds(path: Path) -> str | None:
    try:
        return str(pygit2.Repository(str(path)).path)
    except pygit2.GitError:
        return None


def test_the_search_finds_what_libgit2_finds(tmp_path: Path) -> None:
    layouts = _layouts(tmp_path)
    assert _libgit2_finds(layouts["work tree"]) is not None  # the comparison can fail
    for label, path in layouts.items():
        found = _repository(path)
        assert (None if found is None else str(found.path)) == _libgit2_finds(path), label


def test_no_repository_is_ruled_out_without_pygit2(tmp_path: Path) -> None:
    layouts = _layouts(tmp_path)
    if any((d / ".git").exists() or (d / "HEAD").exists() for d in tmp_path.parents):
        pytest.skip("the temporary directory lies inside a repository")
    assert not _may_be_in_repository(layouts["plain"])
    outside = run_headway("check", "-o", "json", str(layouts["plain"]))
    assert outside.code == 0, outside.output
    assert "pygit2" not in outside.modules
    inside = run_headway("check", "-o", "json", str(layouts["work tree"]))
    assert "pygit2" in inside.modules  # the probe sees it where it loads
