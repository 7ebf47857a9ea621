"""`headway check --transition BASE..HEAD`: render the states between two merges.

For every Application (found at both ends) whose own spec and whose source content both
change in the range, render new spec + old content and old spec + new content, and hand the
four renders to `headway.check.transition`.
"""

from __future__ import annotations

from collections.abc import Callable

import pygit2

from headway.check.context import AppUnit, CheckContext
from headway.check.findings import Finding
from headway.check.manifest import app_sources, as_dict, as_list, name_of, namespace_of
from headway.check.transition import TransitionStates, transition_problems
from headway.cli.check_loader import RepositoryLoader, collect_crds
from headway.model.yamlload import Document
from headway.source.errors import PathNotFound, SourceError
from headway.source.tree import GitTree, TreeReader, normalize_path

__all__ = ["TransitionError", "content_ids", "transition_findings"]

LoaderFactory = Callable[[TreeReader], RepositoryLoader]


class TransitionError(ValueError):
    """A `--transition` argument that does not name two commits."""


def _commit(repo: pygit2.Repository, revision: str) -> pygit2.Commit:
    try:
        return repo.revparse_single(revision).peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError):
        raise TransitionError(f"--transition: unknown revision {revision!r}") from None


def _tree(repo: pygit2.Repository, revision: str, sub: str) -> GitTree:
    tree = _commit(repo, revision).tree
    if sub:
        try:
            tree = repo[tree[sub].id].peel(pygit2.Tree)
        except KeyError:
            raise TransitionError(f"--transition: {sub!r} does not exist at {revision}") from None
    return GitTree(repo, tree, f"{repo.workdir}@{revision}")


def _apps(ctx: CheckContext) -> dict[tuple[str, str], AppUnit]:
    return {
        (namespace_of(u.application.obj), name_of(u.application.obj)): u
        for u in ctx.applications
        if u.application is not None
    }


def content_ids(tree: TreeReader, app: Document) -> dict[str, str]:
    """Content identity of every file or directory the app's sources read from `tree`."""
    ids: dict[str, str] = {}
    for source in app_sources(app.obj):
        base = normalize_path(str(source.get("path") or ""))
        wanted = [base] if source.get("path") else []
        for value_file in as_list(as_dict(source.get("helm")).get("valueFiles")):
            text = str(value_file)
            if text.startswith("$"):
                wanted.append(text.split("/", 1)[1] if "/" in text else "")
            elif text.startswith("/"):
                wanted.append(text)
            else:
                wanted.append(f"{base}/{text}")
        for path in wanted:
            try:
                clean = normalize_path(path)
                ids[clean] = tree.object_id(clean) if tree.kind(clean) else "missing"
            except (PathNotFound, SourceError):
                ids[path] = "missing"
    return ids


def _changed(base: TreeReader, head: TreeReader, old: Document, new: Document) -> bool:
    if app_sources(old.obj) == app_sources(new.obj):
        return False
    return any(content_ids(base, a) != content_ids(head, a) for a in (old, new))


def transition_findings(
    repo: pygit2.Repository, spec: str, *, sub: str, make_loader: LoaderFactory
) -> tuple[list[Finding], tuple[Document, ...]]:
    """Findings of HW401/HW402 for the range, and the CRDs at its base (for HW104)."""
    base_rev, sep, head_rev = spec.partition("..")
    if not sep or not base_rev or not head_rev:
        raise TransitionError(f"--transition wants BASE..HEAD, got {spec!r}")
    base_tree, head_tree = _tree(repo, base_rev, sub), _tree(repo, head_rev, sub)
    base_loader, head_loader = make_loader(base_tree), make_loader(head_tree)
    before, after = _apps(base_loader.load()), _apps(head_loader.load())
    findings: list[Finding] = []
    for key in sorted(before.keys() & after.keys()):
        old, new = before[key], after[key]
        assert old.application is not None and new.application is not None
        if not _changed(base_tree, head_tree, old.application, new.application):
            continue
        states = TransitionStates(
            application=new.application,
            before=old.objects,
            after=new.objects,
            spec_first=base_loader.render_app(new.application),
            content_first=head_loader.render_app(old.application),
        )
        findings.extend(transition_problems(states))
    return findings, collect_crds(base_tree)
