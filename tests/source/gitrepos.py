"""Real Git remotes for tests: bare repositories in tmp_path, reached over file://."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pygit2
import pytest

FIXTURES = Path(__file__).parent / "fixtures"


@dataclass
class Upstream:
    """A bare repository standing in for the Git server, with helpers to commit to it."""

    repo: pygit2.Repository
    url: str

    def commit(
        self, branch: str, edits: Mapping[str, bytes | str | None], message: str = "change"
    ) -> str:
        ref = f"refs/heads/{branch}"
        parents = [self.repo.references[ref].target] if ref in self.repo.references else []
        index = pygit2.Index()
        if parents:
            index.read_tree(self.repo[parents[0]].peel(pygit2.Commit).tree)
        for path, content in edits.items():
            if content is None:
                index.remove(path)
                continue
            data = content.encode() if isinstance(content, str) else content
            index.add(
                pygit2.IndexEntry(path, self.repo.create_blob(data), pygit2.GIT_FILEMODE_BLOB)
            )
        tree = index.write_tree(self.repo)
        sig = pygit2.Signature("Dev", "dev@example.com")
        return str(self.repo.create_commit(ref, sig, sig, message, tree, parents))

    def tip(self, branch: str) -> str:
        return str(self.repo.references[f"refs/heads/{branch}"].target)

    def tag(self, name: str, sha: str, *, annotated: bool = False) -> None:
        if annotated:
            sig = pygit2.Signature("Dev", "dev@example.com")
            self.repo.create_tag(
                name, pygit2.Oid(hex=sha), pygit2.enums.ObjectType.COMMIT, sig, name
            )
        else:
            self.repo.references.create(f"refs/tags/{name}", pygit2.Oid(hex=sha))

    def read(self, branch: str, path: str) -> bytes:
        commit = self.repo.references[f"refs/heads/{branch}"].peel(pygit2.Commit)
        blob = self.repo[commit.tree[path].id]
        assert isinstance(blob, pygit2.Blob)
        return bytes(blob.data)


def make_upstream(path: Path, files: Mapping[str, bytes | str], branch: str = "main") -> Upstream:
    repo = pygit2.init_repository(str(path), bare=True, initial_head=branch)
    upstream = Upstream(repo, path.as_uri())
    upstream.commit(branch, files, "initial")
    return upstream


def add_tree(upstream: Upstream, branch: str, root: Path, prefix: str, message: str) -> str:
    """Commit every file under `root` at `prefix/` (a fixture directory into the repo)."""
    files = {
        f"{prefix}/{p.relative_to(root).as_posix()}": p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }
    return upstream.commit(branch, files, message)


def require_extra(module: str, extra: str) -> None:
    """Skip when an extra is missing; fail under HEADWAY_REQUIRE_SYSTEM_PACKAGES=1."""
    if importlib.util.find_spec(module) is not None:
        return
    message = f"{module} is not installed; pip install 'headway[{extra}]'"
    if os.environ.get("HEADWAY_REQUIRE_SYSTEM_PACKAGES") == "1":
        pytest.fail(message)
    pytest.skip(message)
