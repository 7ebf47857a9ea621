"""Which commit put an image into a repository, whether Headway already reverted it, and the
edit that takes only that image change back at the branch tip.

History is walked along first parents from the tip (the branch's own line, as `git log
--first-parent`), at most `max_commits` deep. Only YAML files inside the given scope are read.
The revert is not `git revert`: that would also undo whatever else the commit changed. It is
an edit of the tip's file putting back, at each place the commit changed the image, the value
that place held before the commit.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import pygit2

from headway.source.image_edits import (
    ImageEditError,
    ImageSite,
    find_image_sites,
    replace_site_values,
    sites_by_location,
)

__all__ = [
    "REVERT_TRAILER",
    "ImageChange",
    "ImageRevertRefused",
    "PathScope",
    "SiteChange",
    "find_image_change",
    "find_revert_of",
    "image_revert_edits",
]

REVERT_TRAILER = "Headway-Revert-Of"
_YAML_SUFFIXES = (".yaml", ".yml")


class ImageRevertRefused(Exception):
    """The image change cannot be taken back at the tip; the message says why (and where)."""


@dataclass(frozen=True)
class PathScope:
    """The files of a repository that can pin the workload's image: whole directories
    (searched recursively) and single files (Helm value files), relative to the root."""

    directories: tuple[str, ...] = ()
    files: tuple[str, ...] = ()

    def covers(self, path: str) -> bool:
        if path in self.files:
            return True
        if not path.endswith(_YAML_SUFFIXES):
            return False
        return any(d in ("", ".") or path.startswith(d.rstrip("/") + "/") for d in self.directories)


@dataclass(frozen=True)
class SiteChange:
    """One place the commit set the image: the site in the commit and the value before."""

    site: ImageSite
    before: str | None  # None when the place did not exist before the commit


@dataclass(frozen=True)
class ImageChange:
    """The commit that introduced the image, and where in which file."""

    commit: str
    subject: str
    file: str
    sites: tuple[SiteChange, ...]

    @property
    def revertible(self) -> bool:
        return all(s.before is not None for s in self.sites)


def _first_parent_line(repo: pygit2.Repository, tip: str, limit: int) -> Iterator[pygit2.Commit]:
    commit = repo[tip].peel(pygit2.Commit)
    for _ in range(limit):
        yield commit
        if not commit.parents:
            return
        commit = commit.parents[0]


def _blob_text(repo: pygit2.Repository, tree: pygit2.Tree, path: str) -> str | None:
    try:
        entry = tree[path]
    except KeyError:
        return None
    blob = repo[entry.id]
    if not isinstance(blob, pygit2.Blob):
        return None
    return bytes(blob.data).decode("utf-8", errors="replace")


def _changed_paths(repo: pygit2.Repository, commit: pygit2.Commit) -> list[str]:
    if commit.parents:
        diff = commit.parents[0].tree.diff_to_tree(commit.tree)
    else:
        diff = commit.tree.diff_to_tree(swap=True)
    return sorted({delta.new_file.path for delta in diff.deltas if delta.new_file.path})


def _site_changes(
    before_text: str | None, after_text: str, image: str, path: str
) -> list[SiteChange]:
    try:
        sites = find_image_sites(after_text, image, file=path)
        before = sites_by_location(before_text, file=path) if before_text is not None else {}
    except ImageEditError:
        return []  # a file broken at that commit pinned nothing usable
    changes = []
    for site in sites:
        old = before.get(site.location)
        old_text = None if old is None else str(old)
        if old_text != site.value:
            changes.append(SiteChange(site, old_text))
    return changes


def find_image_change(
    repo: pygit2.Repository, *, tip: str, scope: PathScope, image: str, max_commits: int = 1000
) -> ImageChange | None:
    """The newest commit on the first-parent line of `tip` that set `image` in `scope`."""
    for commit in _first_parent_line(repo, tip, max_commits):
        parent_tree = commit.parents[0].tree if commit.parents else None
        for path in _changed_paths(repo, commit):
            if not scope.covers(path):
                continue
            after = _blob_text(repo, commit.tree, path)
            if after is None:
                continue
            before = _blob_text(repo, parent_tree, path) if parent_tree is not None else None
            changes = _site_changes(before, after, image, path)
            if changes:
                subject = commit.message.splitlines()[0] if commit.message else ""
                return ImageChange(str(commit.id), subject, path, tuple(changes))
    return None


_TRAILER_LINE = re.compile(rf"^{REVERT_TRAILER}:\s*([0-9a-f]{{40}})\s*$", re.MULTILINE)


def find_revert_of(
    repo: pygit2.Repository, *, tip: str, commit: str, max_commits: int = 1000
) -> str | None:
    """The commit between `tip` and `commit` carrying `Headway-Revert-Of: <commit>`, if any."""
    for candidate in _first_parent_line(repo, tip, max_commits):
        if str(candidate.id) == commit:
            return None
        if commit in _TRAILER_LINE.findall(candidate.message or ""):
            return str(candidate.id)
    return None


def image_revert_edits(
    repo: pygit2.Repository, *, tip: str, change: ImageChange, image: str
) -> dict[str, bytes]:
    """The tip's file with each changed site put back to its value before the commit.

    Refused when the tip no longer holds the failed image at a place the commit set (someone
    moved on: a newer release or a manual fix), or when a place did not exist before."""
    missing = [s.site.describe(change.file) for s in change.sites if s.before is None]
    if missing:
        raise ImageRevertRefused(
            f"commit {change.commit[:12]} added {image} at {', '.join(missing)} with no earlier "
            "value to return to"
        )
    tip_tree = repo[tip].peel(pygit2.Commit).tree
    text = _blob_text(repo, tip_tree, change.file)
    if text is None:
        raise ImageRevertRefused(f"{change.file} no longer exists at {tip[:12]}")
    try:
        at_tip = {s.location: s for s in find_image_sites(text, image, file=change.file)}
    except ImageEditError as err:
        raise ImageRevertRefused(f"{err} (at {tip[:12]})") from None
    edits: list[tuple[ImageSite, str]] = []
    for site_change in change.sites:
        current = at_tip.get(site_change.site.location)
        if current is None:
            where = site_change.site.describe(change.file)
            raise ImageRevertRefused(
                f"the branch moved: {where} no longer sets {image} at {tip[:12]}"
            )
        edits.append((current, str(site_change.before)))
    return {change.file: _edited(text, edits, change.file).encode()}


def _edited(text: str, edits: Sequence[tuple[ImageSite, str]], file: str) -> str:
    try:
        return replace_site_values(text, edits, file=file)
    except ImageEditError as err:
        raise ImageRevertRefused(str(err)) from None
