"""The one error hierarchy of the source layer; pygit2 and tool errors are translated here.

Every message names what the user can act on: the remote URL, the revision, the path in the
repository, the conflicting files, or the extra to install.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "AuthenticationFailed",
    "LinkLeavesRepository",
    "PathNotFound",
    "PushRejected",
    "RemoteUnreachable",
    "RenderError",
    "RevertConflict",
    "SourceError",
    "ToolNotInstalled",
    "UnknownRevision",
]


class SourceError(Exception):
    """Base of every error raised by `headway.source`."""


class RemoteUnreachable(SourceError):
    """The remote could not be contacted (bad URL, refused connection, missing repository)."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"cannot reach Git remote {url}: {reason}")
        self.url = url
        self.reason = reason


class AuthenticationFailed(RemoteUnreachable):
    """The remote refused the credentials, or wanted credentials none were configured for."""


class UnknownRevision(SourceError):
    """A targetRevision that names no branch, tag or commit of the repository."""

    def __init__(self, url: str, revision: str, detail: str = "") -> None:
        suffix = f" ({detail})" if detail else ""
        super().__init__(f"unknown revision {revision!r} in {url}{suffix}")
        self.url = url
        self.revision = revision


class PathNotFound(SourceError):
    """A path that does not exist in the tree of a commit."""

    def __init__(self, path: str, where: str) -> None:
        super().__init__(f"path {path!r} does not exist in {where}")
        self.path = path
        self.where = where


class LinkLeavesRepository(PathNotFound):
    """A path read through a symlink whose target lies outside the repository: never followed,
    and an error wherever it is read (Argo CD refuses such a manifest file too)."""


class RevertConflict(SourceError):
    """Reverting a commit onto the branch tip conflicts; nothing was written."""

    def __init__(self, commit: str, branch: str, paths: Sequence[str]) -> None:
        listed = ", ".join(paths)
        super().__init__(
            f"reverting {commit[:12]} onto {branch} conflicts in {listed}; nothing was committed"
        )
        self.commit = commit
        self.branch = branch
        self.paths = tuple(paths)


class PushRejected(SourceError):
    """The remote refused the push (usually: the branch moved; fetch and redo the commit)."""

    def __init__(self, url: str, ref: str, reason: str) -> None:
        super().__init__(f"push of {ref} to {url} rejected: {reason}")
        self.url = url
        self.ref = ref
        self.reason = reason


class RenderError(SourceError):
    """Manifests could not be rendered; `file` names the file at fault when known."""

    def __init__(self, message: str, file: str = "") -> None:
        super().__init__(f"{file}: {message}" if file else message)
        self.file = file
        self.detail = message


class ToolNotInstalled(RenderError):
    """The program or library a renderer needs is missing; the message names the extra."""
