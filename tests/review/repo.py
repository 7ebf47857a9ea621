"""Real Git repositories (pygit2) built from file maps, one commit per state."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pygit2

ORIGIN = "https://github.com/example/gitops.git"


class GitopsRepo:
    """A repository whose `origin` is ORIGIN, so its Applications' sources resolve locally."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.repo = pygit2.init_repository(str(root), initial_head="main")
        self.repo.remotes.create("origin", ORIGIN)
        self._time = 1_700_000_000

    def commit(self, files: Mapping[str, str | None], message: str = "change") -> str:
        """Write (or with None, delete) files, commit them all; the new commit's id."""
        for name, text in files.items():
            path = self.root / name
            if text is None:
                path.unlink()
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        self.repo.index.add_all()
        self.repo.index.write()
        tree = self.repo.index.write_tree()
        self._time += 60
        who = pygit2.Signature("Headway Test", "test@headway.invalid", self._time, 0)
        parents = [] if self.repo.head_is_unborn else [self.repo.head.target]
        return str(self.repo.create_commit("HEAD", who, who, message, tree, parents))


def application(
    name: str,
    *,
    path: str | None = None,
    namespace: str = "shop",
    extra: str = "",
    sources: str = "",
) -> str:
    """An Application manifest in `argocd`, one source at `path` or the given `sources`."""
    source = f"  source:\n    repoURL: {ORIGIN}\n    path: {path}\n    targetRevision: HEAD\n"
    return (
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\n"
        f"metadata:\n  name: {name}\n  namespace: argocd\n"
        "  finalizers: [resources-finalizer.argocd.argoproj.io]\n"
        "spec:\n  project: shop\n"
        f"  destination:\n    server: https://kubernetes.default.svc\n    namespace: {namespace}\n"
        + (sources if sources else source)
        + extra
    )


def config_map(name: str, **data: str) -> str:
    body = "".join(f"  {k}: {v!r}\n" for k, v in data.items())
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n{body}"


def deployment(name: str, image: str, *, wave: int | None = None) -> str:
    notes = (
        f"  annotations:\n    argocd.argoproj.io/sync-wave: '{wave}'\n" if wave is not None else ""
    )
    return (
        f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\n{notes}"
        f"spec:\n  replicas: 2\n  selector:\n    matchLabels: {{app: {name}}}\n"
        f"  template:\n    metadata:\n      labels: {{app: {name}}}\n"
        f"    spec:\n      containers:\n      - name: {name}\n        image: {image}\n"
    )
