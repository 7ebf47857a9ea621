"""The demo's Git repository: a normal clone with a working tree, committed to as a person
would (`git commit`), and read back to find the revert commit Headway writes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pygit2

from headway.source.image_edits import find_image_sites, replace_site_values
from headway.source.image_history import REVERT_TRAILER

__all__ = ["ROLLOUT_FILE", "DemoRepo", "GitCommit"]

ROLLOUT_FILE = "apps/web/rollout.yaml"
IMAGE_REPOSITORY = "headway-demo/web"
_AUTHOR = pygit2.Signature("Demo Developer", "developer@example.com")


@dataclass(frozen=True)
class GitCommit:
    sha: str
    subject: str
    message: str
    author: str

    @property
    def short(self) -> str:
        return self.sha[:12]


def _commit_view(commit: pygit2.Commit) -> GitCommit:
    message = commit.message or ""
    subject = message.splitlines()[0] if message else ""
    return GitCommit(str(commit.id), subject, message, commit.author.name)


class DemoRepo:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.repo = pygit2.Repository(str(path))

    @classmethod
    def create(cls, path: Path, files: Mapping[str, bytes], message: str) -> DemoRepo:
        pygit2.init_repository(str(path), bare=False, initial_head="main")
        repo = cls(path)
        repo.commit(files, message)
        return repo

    def commit(self, files: Mapping[str, bytes], message: str) -> str:
        """Write `files` into the working tree and commit them on the checked-out branch."""
        index = self.repo.index
        index.read()
        for name, content in files.items():
            target = self.path / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)
            index.add(name)
        index.write()
        tree = index.write_tree()
        parents = [] if self.repo.head_is_unborn else [self.repo.head.target]
        return str(self.repo.create_commit("HEAD", _AUTHOR, _AUTHOR, message, tree, parents))

    def tip(self) -> GitCommit:
        return _commit_view(self.repo.head.peel(pygit2.Commit))

    def read(self, name: str) -> str:
        blob = self.repo[self.repo.head.peel(pygit2.Commit).tree[name].id]
        assert isinstance(blob, pygit2.Blob)
        return blob.data.decode()

    def image(self) -> str:
        """The image tag the tip of main deploys."""
        text = self.read(ROLLOUT_FILE)
        for line in text.splitlines():
            stripped = line.strip()
            if stripped.startswith("image:") and IMAGE_REPOSITORY in stripped:
                return stripped.removeprefix("image:").split("#")[0].strip()
        return ""

    def release(self, tag: str) -> str:
        """Commit the image bump to `tag`, the one-line change a release pipeline makes."""
        text = self.read(ROLLOUT_FILE)
        current = self.image()
        sites = find_image_sites(text, current, file=ROLLOUT_FILE)
        edited = replace_site_values(text, [(s, f"{IMAGE_REPOSITORY}:{tag}") for s in sites])
        return self.commit({ROLLOUT_FILE: edited.encode()}, f"Release web {tag}")

    def reverts_since(self, sha: str) -> list[GitCommit]:
        """Commits after `sha` on main that carry Headway's revert trailer."""
        found = []
        for commit in self.repo.walk(self.repo.head.target):
            if str(commit.id) == sha:
                break
            if f"{REVERT_TRAILER}:" in (commit.message or ""):
                found.append(_commit_view(commit))
        return found

    def log(self, limit: int = 20) -> list[GitCommit]:
        commits = []
        for commit in self.repo.walk(self.repo.head.target):
            commits.append(_commit_view(commit))
            if len(commits) >= limit:
                break
        return commits
