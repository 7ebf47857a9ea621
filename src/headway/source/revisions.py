"""Argo CD's `targetRevision` resolution, as a pure function over the remote's refs.

Order (Argo CD's `lsRemote`): a full 40-hex SHA is used as is; a semver constraint
(`1.2.*`, `>=1.0 <2`, `^1.4`) picks the highest matching tag; then a ref matched by full name
(`refs/heads/main`) or short name (`main`, `v1.2.0`, `origin/main`), branches before tags;
`HEAD` (or "") follows the remote's default branch; finally a 7-39 hex string is taken as an
abbreviated SHA for the caller to expand.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from headway.source.semver_tags import highest_matching_tag, is_constraint

__all__ = ["RefSnapshot", "Resolution", "resolve_revision", "short_ref_name"]

_FULL_SHA = re.compile(r"^[0-9a-f]{40}$")
_SHORT_SHA = re.compile(r"^[0-9a-f]{7,39}$")
_TRACKING = "refs/remotes/origin/"


@dataclass(frozen=True)
class RefSnapshot:
    """The remote's refs as fetched: `refs/heads/x` and `refs/tags/y` -> commit id."""

    refs: Mapping[str, str]
    head_target: str | None  # e.g. "refs/heads/main"; None when the remote has no HEAD


@dataclass(frozen=True)
class Resolution:
    """A resolved revision: a commit id, or an abbreviated SHA still to expand."""

    sha: str
    abbreviated: bool = False
    ref: str | None = None


def short_ref_name(ref: str) -> str:
    for prefix in ("refs/heads/", "refs/tags/", "refs/remotes/"):
        if ref.startswith(prefix):
            return ref[len(prefix) :]
    return ref.removeprefix("refs/")


def _ordered(refs: Mapping[str, str]) -> list[str]:
    rank = {"refs/heads/": 0, "refs/tags/": 1}
    return sorted(refs, key=lambda r: (next((v for k, v in rank.items() if r.startswith(k)), 2), r))


def resolve_revision(revision: str, snapshot: RefSnapshot) -> Resolution | None:
    """The commit `revision` names, or None when nothing matches."""
    revision = revision.strip() or "HEAD"
    if _FULL_SHA.match(revision.lower()):
        return Resolution(revision.lower())
    if is_constraint(revision):
        tags = [short_ref_name(r) for r in snapshot.refs if r.startswith("refs/tags/")]
        # Argo CD falls back to plain ref matching when no tag satisfies the constraint.
        revision = highest_matching_tag(revision, tags) or revision
    if revision.startswith(_TRACKING):
        revision = "refs/heads/" + revision[len(_TRACKING) :]
    elif revision.startswith("origin/") and f"refs/heads/{revision[7:]}" in snapshot.refs:
        revision = f"refs/heads/{revision[7:]}"
    for ref in _ordered(snapshot.refs):
        if revision in (ref, short_ref_name(ref)):
            return Resolution(snapshot.refs[ref], ref=ref)
    target = snapshot.head_target
    if revision == "HEAD" and target is not None and target in snapshot.refs:
        return Resolution(snapshot.refs[target], ref=target)
    if _SHORT_SHA.match(revision.lower()):
        return Resolution(revision.lower(), abbreviated=True)
    return None
