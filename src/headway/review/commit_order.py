"""Which Applications a commit touches go first. Purely computational.

When a repository moves, every Application reading it is reconciled (its status records the
new revision, as Argo CD's does), but only those reading a changed path can render anything
new. Taking those first makes the latency from a commit to the changed app independent of how
many other apps read the same repository.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from headway.check.manifest import app_sources
from headway.review.reads import read_paths, touching

__all__ = ["commit_order", "touched_by_commit"]


def touched_by_commit(
    app: Any, changed: Mapping[str, Sequence[str] | None], *, library: Sequence[str] = ()
) -> bool:
    """Whether `app` reads a changed file in a moved repository. `changed` maps each moved
    repoURL to its changed files, or None when they are unknown (then every app reading it
    counts as touched). `library` is the paths outside its sources the app's render reads."""
    for source in app_sources(app):
        url = str(source.get("repoURL") or "")
        if url not in changed:
            continue
        files = changed[url]
        if files is None:
            return True
        reads = read_paths(app, library=library, in_repository=url.__eq__)
        if touching(files, reads):
            return True
    return False


def commit_order(
    apps: Sequence[Any],
    changed: Mapping[str, Sequence[str] | None],
    *,
    libraries: Mapping[str, Sequence[str]],
) -> list[Any]:
    """`apps` with those the commit touched first, each group in its given order.
    `libraries` maps an app's name to its library paths (absent: none)."""
    touched: list[Any] = []
    rest: list[Any] = []
    for app in apps:
        name = str((app.get("metadata") or {}).get("name") or "")
        library = libraries.get(name, ())
        (touched if touched_by_commit(app, changed, library=library) else rest).append(app)
    return touched + rest
