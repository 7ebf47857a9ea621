"""Git repositories through pygit2: a bare cache per remote URL, fetch, resolve, read, commit, push.

The cache keeps the remote's branches as `refs/remotes/origin/*` and its tags as `refs/tags/*`;
`refs/heads/<branch>` holds only commits Headway wrote and has not pushed yet. The flow for a
write is: `fetch()`, `commit_edits()` or `revert()` (built on the fetched branch tip), `push()`;
on `PushRejected` the branch moved: fetch and build the commit again.

pygit2 errors are translated here into `headway.source.errors`.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pygit2
from pygit2.enums import CredentialType, FetchPrune, RepositoryOpenFlag

from headway.source.errors import (
    AuthenticationFailed,
    PushRejected,
    RemoteUnreachable,
    SourceError,
    UnknownRevision,
)
from headway.source.git_commits import BotIdentity, build_edit_commit, build_revert_commit
from headway.source.git_lock import RepositoryLock
from headway.source.revisions import RefSnapshot, resolve_revision
from headway.source.tree import GitTree
from headway.source.tree_listings import TreeEntries

__all__ = [
    "LARGEST_CACHED_TREE",
    "BotIdentity",
    "CommitResult",
    "CredentialsFor",
    "GitCache",
    "GitCredentials",
    "GitRepository",
    "local_repo_path",
]

_FETCH_REFSPECS = ["+refs/heads/*:refs/remotes/origin/*", "+refs/tags/*:refs/tags/*"]
_TRACKING = "refs/remotes/origin/"
_FULL_SHA = re.compile(r"^[0-9a-f]{40}$")


@dataclass(frozen=True)
class GitCredentials:
    """How to authenticate: HTTPS user and password/token, or an SSH key or agent."""

    username: str | None = None
    password: str | None = field(default=None, repr=False)
    ssh_private_key: Path | None = None
    ssh_public_key: Path | None = None
    ssh_passphrase: str = field(default="", repr=False)
    use_ssh_agent: bool = False
    insecure_skip_tls_verify: bool = False
    # The key itself (a repository Secret's `sshPrivateKey`), kept in memory, never on disk.
    ssh_private_key_data: str | None = field(default=None, repr=False)
    # An HTTPS client certificate and its key, PEM (`tlsClientCertData`/`tlsClientCertKey`);
    # chart repositories present them, Git remotes do not read them yet.
    tls_client_cert: str | None = field(default=None, repr=False)
    tls_client_key: str | None = field(default=None, repr=False)


@dataclass(frozen=True)
class CommitResult:
    """The branch tip after a write; `created` is False when there was nothing to change."""

    sha: str
    created: bool


class _AuthRefused(Exception):
    pass


class _Callbacks(pygit2.RemoteCallbacks):
    """Credentials for the first request only: a second ask means the first was refused."""

    def __init__(self, credentials: GitCredentials | None) -> None:
        super().__init__()
        self._creds = credentials
        self.asked = 0
        self.rejections: list[tuple[str, str]] = []

    def credentials(self, url: str, username_from_url: str | None, allowed_types: Any) -> Any:
        self.asked += 1
        creds = self._creds
        if creds is None:
            raise _AuthRefused("the remote requires credentials and none are configured")
        if self.asked > 1:
            raise _AuthRefused("the remote refused the configured credentials")
        user = creds.username or username_from_url or "git"
        if allowed_types & CredentialType.USERNAME:
            return pygit2.Username(user)
        if allowed_types & CredentialType.SSH_KEY and creds.use_ssh_agent:
            return pygit2.KeypairFromAgent(user)
        if allowed_types & CredentialType.SSH_MEMORY and creds.ssh_private_key_data:
            key = creds.ssh_private_key_data
            return pygit2.KeypairFromMemory(user, None, key, creds.ssh_passphrase)
        if allowed_types & CredentialType.SSH_KEY and creds.ssh_private_key is not None:
            public = str(creds.ssh_public_key) if creds.ssh_public_key else None
            return pygit2.Keypair(user, public, str(creds.ssh_private_key), creds.ssh_passphrase)
        if allowed_types & CredentialType.USERPASS_PLAINTEXT and creds.password is not None:
            return pygit2.UserPass(user, creds.password)
        raise _AuthRefused("no configured credential fits what the remote accepts")

    def certificate_check(self, certificate: Any, valid: bool, host: bytes | str) -> bool:
        if valid or (self._creds is not None and self._creds.insecure_skip_tls_verify):
            return True
        raise _AuthRefused(f"the TLS certificate of {host!r} is not trusted")

    def push_update_reference(self, refname: str, message: str | None) -> None:
        if message:
            self.rejections.append((refname, message))


def local_repo_path(url: str) -> Path | None:
    """The directory of a `file://` URL or plain path, None for network remotes."""
    if url.startswith("file://"):
        return Path(unquote(urlparse(url).path))
    if "://" not in url and not url.startswith("git@"):
        return Path(url)
    return None


def _normal_url(url: str) -> str:
    return url.strip().rstrip("/").removesuffix(".git")


def _cache_dir_name(url: str) -> str:
    normal = _normal_url(url)
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", normal.rsplit("/", 1)[-1])[:40] or "repo"
    return f"{slug}-{hashlib.sha256(normal.encode()).hexdigest()[:16]}.git"


def _bound_network_waits() -> None:
    """libgit2 waits forever on a silent server by default; bound it (process-wide)."""
    if pygit2.settings.server_connect_timeout == 0:
        pygit2.settings.server_connect_timeout = 15_000  # ms
    if pygit2.settings.server_timeout == 0:
        pygit2.settings.server_timeout = 120_000  # ms


# Directories libgit2 keeps in its object cache once read (its default is 4 KB, so a
# 1,000-app `apps/` tree was inflated again by every reader of a commit: the tree diff and
# then the changed app's lookup, about 0.2 ms each). The cache's total stays bounded by
# libgit2's own limit (256 MB).
LARGEST_CACHED_TREE = 4 << 20


def _cache_large_directories() -> None:
    """Let libgit2's object cache (process-wide) keep trees up to `LARGEST_CACHED_TREE`."""
    pygit2.settings.cache_object_limit(pygit2.enums.ObjectType.TREE, LARGEST_CACHED_TREE)


# Pack files libgit2 keeps open at once, process-wide (its own default: no bound). Every
# fetch writes one pack and libgit2 never repacks, so a controller held a file descriptor
# per fetch it had made (1,207 after 1,200 fetches of one repository; at a 3-minute poll,
# a process under the common limit of 1,024 descriptors would fail to open files within
# two days). Past the bound, the least recently used pack is closed, and opened again when
# an object in it is read.
OPEN_PACKS = 128


# Packs a cache may hold before a fetch packs every object into one (git's own
# `gc.autoPackLimit`): each fetch writes a pack, and libgit2 never repacks, so a missing
# object's lookup read every pack's index (4-7 ms after 1,200 fetches) and the indexes
# stayed mapped.
REPACK_AT = 50


def _bound_open_packs() -> None:
    """Bound libgit2's open pack files to `OPEN_PACKS`, unless the process bounded them."""
    if pygit2.settings.mwindow_file_limit == 0:
        pygit2.settings.mwindow_file_limit = OPEN_PACKS


CredentialsFor = Callable[[str], GitCredentials | None]


class GitCache:
    """One bare repository per remote URL under `root`, shared by every Application.

    Credentials: those passed to `repository()`, else what `credentials_for(url)` answers
    (e.g. from repository Secrets, asked on every call so a changed Secret takes effect on
    the next fetch or push); without either, those given before stay with the repository.
    """

    def __init__(self, root: Path, *, credentials_for: CredentialsFor | None = None) -> None:
        _bound_network_waits()
        _cache_large_directories()
        _bound_open_packs()
        self._root = root
        self._credentials_for = credentials_for
        self._repos: dict[str, GitRepository] = {}
        self._lock = threading.Lock()

    @property
    def root(self) -> Path:
        return self._root

    def repository(self, url: str, credentials: GitCredentials | None = None) -> GitRepository:
        if credentials is None and self._credentials_for is not None:
            credentials = self._credentials_for(url)
            replace = True
        else:
            replace = credentials is not None
        with self._lock:
            repo = self._repos.get(_normal_url(url))
            if repo is None:
                repo = GitRepository(url, self._root / _cache_dir_name(url), credentials)
                self._repos[_normal_url(url)] = repo
                return repo
        if replace:
            repo.use_credentials(credentials)
        return repo


def _open_or_create(path: Path) -> pygit2.Repository:
    """The bare repository at `path`, created if it is not one yet. Called under its lock, so
    no other process is half-way through creating it; one that was killed half-way left a
    directory libgit2 cannot open, which creating again completes (initialising an existing
    repository keeps what it holds)."""
    try:  # NO_SEARCH: never a repository that merely contains the cache directory
        return pygit2.Repository(str(path), RepositoryOpenFlag.NO_SEARCH)
    except pygit2.GitError:
        return pygit2.init_repository(str(path), bare=True)


class GitRepository:
    """A bare cache of one remote. Methods are safe across threads and across processes
    sharing the cache: each write holds the repository's lock (`git_lock`), and a commit
    followed by its push holds it throughout through `writing()`."""

    def __init__(self, url: str, path: Path, credentials: GitCredentials | None = None) -> None:
        self.url = url
        self.path = path
        self._credentials = credentials
        path.mkdir(parents=True, exist_ok=True)
        self._lock = RepositoryLock(path)
        with self._lock:  # another process may be creating it too
            self._repo = _open_or_create(path)
            if "origin" not in self._repo.remotes.names():
                self._repo.remotes.create("origin", url)

    @property
    def repo(self) -> pygit2.Repository:
        return self._repo

    def writing(self) -> RepositoryLock:
        """The repository's lock, to hold across a commit and its push: no other thread or
        process moves the local branch in between (which would push its commit as ours)."""
        return self._lock

    def use_credentials(self, credentials: GitCredentials | None) -> None:
        """Authenticate later fetches and pushes with `credentials` (None: anonymously).

        Not under the repository lock: a fetch in progress keeps the credentials it started
        with, and a caller never waits for someone else's network I/O here."""
        self._credentials = credentials

    # -- remote I/O ---------------------------------------------------------------------------

    def fetch(self) -> None:
        """Bring every branch and tag of the remote into the cache (clone on first use)."""
        with self._lock:
            remote = self._repo.remotes["origin"]
            callbacks = _Callbacks(self._credentials)
            try:
                remote.fetch(_FETCH_REFSPECS, callbacks=callbacks, prune=FetchPrune.PRUNE)
                heads = remote.list_heads(callbacks=callbacks, connect=False)
            except (pygit2.GitError, _AuthRefused, OSError) as err:
                raise self._translate(err) from None
            head = next((h.symref_target for h in heads if h.name == "HEAD"), None)
            self._record_remote_head(head)
            self._repack_if_due()

    def _repack_if_due(self) -> None:
        """Past `REPACK_AT` packs, write one pack of every object and remove the others
        (under the lock: no other writer adds objects meanwhile). A reader holding the
        repository open, in this process or another, keeps what it mapped, and finds an
        object whose pack went in the new one (libgit2 lists the packs again on a miss:
        tests/source/test_git_packs.py). A pack that cannot be written leaves every pack
        as it was, for the next fetch to try again."""
        directory = Path(self._repo.path) / "objects" / "pack"
        if len(list(directory.glob("pack-*.pack"))) <= REPACK_AT:
            return
        before = set(directory.glob("pack-*"))
        try:
            self._repo.pack()
        except (pygit2.GitError, OSError):
            return
        written = set(directory.glob("pack-*")) - before
        if not any(path.suffix == ".pack" for path in written):
            return
        for path in before:
            with contextlib.suppress(OSError):
                path.unlink()

    def _record_remote_head(self, target: str | None) -> None:
        name = f"{_TRACKING}HEAD"
        if target and target.startswith("refs/heads/"):
            tracking = _TRACKING + target.removeprefix("refs/heads/")
            self._repo.references.create(name, tracking, force=True)
        elif name in self._repo.references:
            self._repo.references.delete(name)

    def push(self, branch: str, *, force: bool = False) -> None:
        """Push the commit at `refs/heads/<branch>`; `PushRejected` when the remote moved.

        `force` replaces the remote branch whatever it holds: only for a branch Headway owns
        (a promotion's pull-request branch, rebuilt on a newer base)."""
        with self._lock:
            local = f"refs/heads/{branch}"
            if local not in self._repo.references:
                raise UnknownRevision(self.url, branch, "no local commit to push on this branch")
            remote = self._repo.remotes["origin"]
            callbacks = _Callbacks(self._credentials)
            try:
                remote.push([f"{'+' if force else ''}{local}:{local}"], callbacks=callbacks)
            except pygit2.GitError as err:
                if "fastforward" in str(err) or "not present locally" in str(err):
                    raise PushRejected(self.url, local, str(err)) from None
                raise self._translate(err) from None
            except (_AuthRefused, OSError) as err:
                raise self._translate(err) from None
            if callbacks.rejections:
                ref, reason = callbacks.rejections[0]
                raise PushRejected(self.url, ref, reason)
            target = self._repo.references[local].target
            self._repo.references.create(f"{_TRACKING}{branch}", target, force=True)

    def _translate(self, err: BaseException) -> SourceError:
        text = str(err)
        if isinstance(err, _AuthRefused) or re.search(
            r"auth|credential|401|403|certificate", text, re.IGNORECASE
        ):
            return AuthenticationFailed(self.url, text)
        return RemoteUnreachable(self.url, text)

    # -- reading ------------------------------------------------------------------------------

    def snapshot(self) -> RefSnapshot:
        """The remote's branches and tags as of the last fetch."""
        refs: dict[str, str] = {}
        head_target: str | None = None
        for name in self._repo.references:
            ref = self._repo.references[name]
            if name == f"{_TRACKING}HEAD":
                target = ref.target
                if isinstance(target, str):
                    head_target = "refs/heads/" + target.removeprefix(_TRACKING)
            elif name.startswith(_TRACKING):
                refs["refs/heads/" + name.removeprefix(_TRACKING)] = str(ref.peel(pygit2.Commit).id)
            elif name.startswith("refs/tags/"):
                try:
                    refs[name] = str(ref.peel(pygit2.Commit).id)
                except (pygit2.InvalidSpecError, ValueError):
                    continue  # a tag of a tree or blob names no commit
        return RefSnapshot(refs, head_target)

    def resolve(self, revision: str, *, fetch_missing: bool = False) -> str:
        """The commit id `revision` (branch, tag, SHA, HEAD, semver range) names.

        With `fetch_missing`, a full SHA or a `refs/...` name (e.g. `refs/pull/42/head`) that
        the last `fetch()` did not bring is fetched on its own first, as Argo CD does.
        """
        with self._lock:
            if fetch_missing:
                self._fetch_extra(revision.strip())
            extra = self._extra_ref(revision.strip())
            if extra in self._repo.references:
                return str(self._repo.references[extra].peel(pygit2.Commit).id)
            found = resolve_revision(revision, self.snapshot())
            if found is None:
                raise UnknownRevision(self.url, revision, "no such branch, tag or commit")
            try:
                obj = self._repo.revparse_single(found.sha)
                return str(obj.peel(pygit2.Commit).id)
            except (KeyError, ValueError, pygit2.GitError) as err:
                detail = str(err) if found.abbreviated else "not fetched, or not a commit"
                raise UnknownRevision(self.url, revision, detail) from None

    @staticmethod
    def _extra_ref(revision: str) -> str:
        """Where a ref outside heads/tags is kept once fetched on its own."""
        if revision.startswith("refs/") and not revision.startswith(("refs/heads/", "refs/tags/")):
            return f"refs/headway/{revision.removeprefix('refs/')}"
        return ""

    def _fetch_extra(self, revision: str) -> None:
        if _FULL_SHA.match(revision.lower()):
            if self._repo.get(revision.lower()) is not None:
                return
            spec = f"{revision.lower()}:refs/headway/sha/{revision.lower()}"
        elif self._extra_ref(revision):
            spec = f"+{revision}:{self._extra_ref(revision)}"
        else:
            return
        remote = self._repo.remotes["origin"]
        try:
            remote.fetch([spec], callbacks=_Callbacks(self._credentials))
        except _AuthRefused as err:
            raise self._translate(err) from None
        except pygit2.GitError as err:
            if re.search(r"connect|resolve|auth|credential|certificate", str(err), re.I):
                raise self._translate(err) from None
            # The remote does not have it: resolution below reports UnknownRevision.

    def commit(self, revision: str) -> pygit2.Commit:
        sha = self.resolve(revision)
        commit = self._repo[sha]
        assert isinstance(commit, pygit2.Commit)
        return commit

    def tree(self, revision: str, *, listings: TreeEntries | None = None) -> GitTree:
        """The whole repository tree at `revision`, readable without a working tree;
        `listings` are directories a tree diff read, for lookups to search instead of
        parsing them again (`tree_listings`)."""
        commit = self.commit(revision)
        description = f"{self.url}@{str(commit.id)[:12]}"
        return GitTree(self._repo, commit.tree, description, listings=listings)

    def tree_id(self, revision: str, path: str = "") -> str:
        """The object id of `path` at `revision`: equal ids mean equal content."""
        return self.tree(revision).object_id(path)

    # -- writing ------------------------------------------------------------------------------

    def _branch_tip(self, branch: str, base: str | None) -> pygit2.Commit:
        if base is not None:
            return self.commit(base)
        tracking = f"{_TRACKING}{branch}"
        if tracking not in self._repo.references:
            raise UnknownRevision(self.url, branch, "no such branch on the remote; fetch first")
        tip = self._repo.references[tracking].peel(pygit2.Commit)
        assert isinstance(tip, pygit2.Commit)
        return tip

    def _advance(self, branch: str, parent: pygit2.Commit, oid: pygit2.Oid | None) -> CommitResult:
        if oid is None:
            return CommitResult(str(parent.id), created=False)
        self._repo.references.create(f"refs/heads/{branch}", oid, force=True)
        return CommitResult(str(oid), created=True)

    def commit_edits(
        self,
        *,
        branch: str,
        edits: Mapping[str, bytes | None],
        message: str,
        identity: BotIdentity | None = None,
        base: str | None = None,
    ) -> CommitResult:
        """Commit `edits` (path -> new bytes, None deletes) on the fetched tip of `branch`.

        `base` starts from another revision instead (to create `branch`).
        """
        with self._lock:
            parent = self._branch_tip(branch, base)
            oid = build_edit_commit(
                self._repo,
                parent=parent,
                edits=edits,
                message=message,
                identity=identity or BotIdentity(),
            )
            return self._advance(branch, parent, oid)

    def revert(
        self,
        *,
        commit: str,
        branch: str,
        identity: BotIdentity | None = None,
        message: str | None = None,
    ) -> CommitResult:
        """Commit the revert of `commit` on the fetched tip of `branch`.

        Raises `RevertConflict` (listing the paths) when later commits touched the same lines;
        then no ref is moved.
        """
        with self._lock:
            target = self.commit(commit)
            tip = self._branch_tip(branch, None)
            oid = build_revert_commit(
                self._repo,
                commit=target,
                onto=tip,
                branch=branch,
                identity=identity or BotIdentity(),
                message=message,
            )
            return self._advance(branch, tip, oid)
