"""Two processes sharing one Git cache directory never push each other's commit: a writer
holds the repository's lock (a file lock) from its commit to its push, so a second process's
commit of the same branch waits for it, and is then refused as built on an old tip.

The window is opened on purpose: writer A stops right before its push (its `push` waits for
a `go` file); writer B starts only then, and the test lets A go once B is either done (the old
code, whose lock was per process) or waiting for the lock (the `git_lock.on_contended` hook)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pygit2

from headway.source import git_lock
from headway.source.git import GitCache
from polling import wait_for
from source.gitrepos import make_upstream

_WRITER = """
import json, sys, time
from pathlib import Path
from headway.controllers.convergence.git import RemoteBranch
from headway.source import git_lock
from headway.source.errors import PushRejected
from headway.source.git import BotIdentity, GitCache, GitRepository

cache_dir, url, parent, role, work = sys.argv[1:6]
work_dir = Path(work)
if role == "A":  # stops right before its push until the test says go
    plain_push = GitRepository.push

    def push(self, branch, *, force=False):
        (work_dir / "a-ready").touch()
        while not (work_dir / "go").exists():
            time.sleep(0.01)
        plain_push(self, branch, force=force)

    GitRepository.push = push
else:  # tells the test it waits for the lock
    git_lock.on_contended = lambda _file: (work_dir / "b-waiting").touch()
writer = RemoteBranch(GitCache(Path(cache_dir)).repository(url), "main", BotIdentity())
writer.refresh()
edit = {"app/values.yaml": f"tag: from-{role}\\n".encode()}
try:
    sha = writer.write(parent=parent, edits=edit, message=f"write by {role}")
    print(json.dumps({"sha": sha}), flush=True)
except PushRejected as err:
    print(json.dumps({"rejected": str(err)}), flush=True)
"""


def _writer(tmp_path: Path, url: str, parent: str, role: str) -> subprocess.Popen[str]:
    argv = [sys.executable, "-c", _WRITER, str(tmp_path / "cache"), url, parent, role]
    return subprocess.Popen(
        [*argv, str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=dict(os.environ),
    )


def _answer(process: subprocess.Popen[str]) -> dict[str, str]:
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    answer: dict[str, str] = json.loads(out.strip().splitlines()[-1])
    return answer


def test_a_second_process_cannot_move_the_branch_between_a_commit_and_its_push(
    tmp_path: Path,
) -> None:
    upstream = make_upstream(tmp_path / "remote.git", {"app/values.yaml": "tag: v1\n"})
    parent = upstream.tip("main")
    first = _writer(tmp_path, upstream.url, parent, "A")
    second = None
    try:
        wait_for((tmp_path / "a-ready").exists, timeout=60, what="A before its push")
        second = _writer(tmp_path, upstream.url, parent, "B")
        wait_for(
            lambda: second.poll() is not None or (tmp_path / "b-waiting").exists(),
            timeout=60,
            what="B done, or waiting for A's lock",
        )
        (tmp_path / "go").touch()
        a, b = _answer(first), _answer(second)
    finally:
        for process in (first, second):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()
    assert upstream.tip("main") == a["sha"]  # what A says it pushed is what the remote holds
    assert upstream.read("main", "app/values.yaml") == b"tag: from-A\n"
    assert "rejected" in b  # B built on the tip it read, which A moved: refused, not lost
    assert (tmp_path / "b-waiting").exists()


def test_the_lock_is_reentrant_and_released_with_the_file(tmp_path: Path) -> None:
    make_upstream(tmp_path / "remote.git", {"a.txt": "1\n"})
    repository = GitCache(tmp_path / "cache").repository((tmp_path / "remote.git").as_uri())
    with repository.writing():
        repository.fetch()  # takes the same lock again, in the same thread
        assert repository.resolve("main")
    lock_file = repository.path / git_lock.LOCK_FILE
    probe = subprocess.run(
        [sys.executable, "-c",
         "import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDWR);"
         " fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)", str(lock_file)],
        check=False, capture_output=True, text=True, timeout=60,
    )
    assert probe.returncode == 0, probe.stderr  # released: another process takes it at once
    assert isinstance(repository.repo, pygit2.Repository)
