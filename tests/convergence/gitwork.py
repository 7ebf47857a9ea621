"""Real repositories for convergence tests: a clone with a working tree, or a bare remote."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pygit2

ROLLOUT = """\
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {{app: web}}
  template:
    metadata:
      labels: {{app: web}}
    spec:
      containers:
        - name: web
          image: shop/web:{tag}   # the release
          env:
            - {{name: GREETING, value: "{greeting}"}}
"""


def rollout_yaml(tag: str, greeting: str = "hello") -> str:
    return ROLLOUT.format(tag=tag, greeting=greeting)


class WorkRepo:
    """A repository on disk (with a working tree unless `bare`) on branch main."""

    def __init__(self, path: Path, *, bare: bool = False) -> None:
        self.path = path
        self.repo = pygit2.init_repository(str(path), bare=bare, initial_head="main")
        self.url = path.as_uri()

    def commit(self, files: Mapping[str, str | None], message: str) -> str:
        ref = "refs/heads/main"
        parents = [self.repo.references[ref].target] if ref in self.repo.references else []
        index = pygit2.Index()
        if parents:
            index.read_tree(self.repo[parents[0]].peel(pygit2.Commit).tree)
        for path, content in files.items():
            if content is None:
                index.remove(path)
            else:
                blob = self.repo.create_blob(content.encode())
                index.add(pygit2.IndexEntry(path, blob, pygit2.GIT_FILEMODE_BLOB))
        tree = index.write_tree(self.repo)
        sig = pygit2.Signature("Dev", "dev@example.com")
        sha = str(self.repo.create_commit(ref, sig, sig, message, tree, parents))
        if not self.repo.is_bare:
            self.repo.checkout_head(strategy=pygit2.enums.CheckoutStrategy.FORCE)
        return sha

    def tip(self) -> str:
        return str(self.repo.references["refs/heads/main"].target)

    def read(self, path: str, rev: str | None = None) -> str:
        commit = self.repo[rev or self.tip()].peel(pygit2.Commit)
        blob = self.repo[commit.tree[path].id]
        assert isinstance(blob, pygit2.Blob)
        return blob.data.decode()

    def log(self) -> list[pygit2.Commit]:
        return list(self.repo.walk(self.repo.references["refs/heads/main"].target))

    def changed_lines(self, rev: str) -> list[str]:
        commit = self.repo[rev].peel(pygit2.Commit)
        diff = commit.parents[0].tree.diff_to_tree(commit.tree)
        lines = []
        for patch in diff:
            for hunk in patch.hunks:
                lines += [
                    f"{ln.origin}{ln.content.rstrip()}" for ln in hunk.lines if ln.origin in "+-"
                ]
        return lines
