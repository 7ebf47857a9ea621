"""Read-only views of a source tree: a Git tree at a commit, or a directory on disk.

Renderers read through `TreeReader` so they work from a commit without a working tree; files
are written to disk (`materialize`) only when an external tool needs them. Paths are POSIX,
relative to the reader's root, without a leading slash; "" is the root.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, Protocol

from headway.source.errors import LinkLeavesRepository, PathNotFound

if TYPE_CHECKING:
    import pygit2

    from headway.source.tree_listings import Listing, TreeEntries

__all__ = ["EscapingLink", "FilesystemTree", "GitTree", "TreeReader", "normalize_path"]

EntryKind = Literal["file", "dir"]
_MAX_LINK_HOPS = 8


class _Pygit2OnFirstUse:
    """Stands for the `pygit2` module, imported when one of its names is first read: a
    `FilesystemTree` reads files without Git, and a `headway check` of a directory outside
    any repository would otherwise load libgit2 (about 0.1 s of a new process) for nothing.
    A `GitTree` is only made from a repository, so pygit2 is loaded by then."""

    def __getattr__(self, name: str) -> Any:
        import pygit2 as module

        value = getattr(module, name)
        setattr(self, name, value)  # the next read is a plain attribute
        return value


if not TYPE_CHECKING:
    pygit2 = _Pygit2OnFirstUse()


def normalize_path(path: str) -> str:
    """`./apps//checkout/` -> `apps/checkout`; refuses paths that climb out of the root."""
    parts: list[str] = []
    for part in path.replace("\\", "/").split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                raise PathNotFound(path, "the repository (it leaves the repository root)")
            parts.pop()
            continue
        parts.append(part)
    return "/".join(parts)


@dataclass(frozen=True)
class EscapingLink:
    """A symlink in the tree whose target lies outside the repository: never followed."""

    path: str
    target: str

    @property
    def message(self) -> str:
        return f"{self.path} is a symlink to {self.target}, which leaves the repository"

    def within(self, directory: str) -> bool:
        """Whether the link is at or under `directory` ("" is the whole tree)."""
        return not directory or self.path == directory or self.path.startswith(f"{directory}/")


class TreeReader(Protocol):
    """What a renderer needs from a source tree."""

    @property
    def description(self) -> str:
        """Where the tree comes from, for error messages (`url@sha`, a directory)."""
        ...

    def kind(self, path: str) -> EntryKind | None:
        """The entry type at `path` ("file" or "dir"), or None when it does not exist."""
        ...

    def files(self, path: str = "") -> list[str]:
        """Every file under `path`, recursively, as sorted root-relative paths."""
        ...

    def names(self, path: str = "") -> list[str]:
        """The names of the entries directly in the directory `path` (files and directories)."""
        ...

    def read(self, path: str) -> bytes:
        """The content of the file at `path`; `PathNotFound` when it is missing."""
        ...

    def object_id(self, path: str = "") -> str:
        """A content identity of the file or directory at `path` (the Git object id)."""
        ...

    def materialize(self, destination: Path, path: str = "") -> tuple[EscapingLink, ...]:
        """Write the files under `path` to `destination/<path>` for an external tool.

        Symlinks that leave the repository are not written; they are returned, so that only
        the renderer whose input reaches one fails, and names it.
        """
        ...


class _Entry(NamedTuple):
    """A directory entry: what a lookup needs of it."""

    id: pygit2.Oid
    filemode: int


_RECENT_ENTRIES = 32  # entries a GitTree keeps from its last lookups


class GitTree:
    """The tree of one commit, read straight from the object database."""

    def __init__(
        self,
        repo: pygit2.Repository,
        tree: pygit2.Tree,
        description: str,
        *,
        listings: TreeEntries | None = None,
    ) -> None:
        self._repo = repo
        self._tree = tree
        self._description = description
        # Directories' raw listings a tree diff read (`tree_listings`): an entry of one is
        # found in its bytes, where parsing the directory through libgit2 cost ~0.3 ms for a
        # 1,000-entry `apps/` at each new commit.
        self._listings = listings
        # Directories looked up so far, by path. libgit2 keeps no tree over 4 KB in its
        # object cache, so a by-path lookup through a large directory (an `apps/` of
        # thousands of entries) inflated and parsed it again each time: a fleet's pass over
        # one commit cost apps x apps (bench/bench_scale.py).
        self._directories: dict[str, pygit2.Tree] = {"": tree}
        # The entries looked up last, by path: one render asks what its path is, lists it,
        # asks for its id, its links, its files, each through the same lookup (through a
        # kept listing's bytes for an `apps/` the diff read: ~40 us each). A few, not all:
        # a cold pass over a fleet looks up every app's paths in one commit's tree.
        self._recent: dict[str, _Entry | None] = {}

    @property
    def description(self) -> str:
        return self._description

    @property
    def tree_id(self) -> str:
        return str(self._tree.id)

    def _object(self, path: str) -> pygit2.Object | None:
        clean = normalize_path(path)
        if not clean:
            return self._tree
        entry = self._entry(clean)
        if entry is None or entry.filemode == pygit2.enums.FileMode.COMMIT:
            return None  # (a submodule's commit is in another repository: nothing here)
        return self._repo[entry.id]

    def _entry(self, clean: str) -> _Entry | None:
        """The entry at a normalized, non-empty path, or None; its directory is looked up
        through `_directory`, so each directory is parsed once per tree, unless a tree diff
        kept that directory's raw listing (then its bytes are searched)."""
        recent = self._recent
        if clean in recent:
            return recent[clean]
        found = self._look_up(clean)
        if len(recent) >= _RECENT_ENTRIES:
            recent = self._recent = {}  # (a new dict: another thread may read the old one)
        recent[clean] = found
        return found

    def _look_up(self, clean: str) -> _Entry | None:
        parent, _, name = clean.rpartition("/")
        directory = self._directories.get(parent)
        if directory is None:
            listing = self._kept_listing(parent) if self._listings is not None else None
            if listing is not None:
                found = listing.entry(name)
                return None if found is None else _Entry(found[1], found[0])
            directory = self._directory(parent)
            if directory is None:
                return None
        try:
            entry = directory[name]
        except KeyError:
            return None
        return _Entry(entry.id, int(entry.filemode))

    def _kept_listing(self, clean: str) -> Listing | None:
        assert self._listings is not None
        if not clean:
            return self._listings.kept(self._tree.id)
        entry = self._entry(clean)
        if entry is None or entry.filemode != pygit2.enums.FileMode.TREE:
            return None
        return self._listings.kept(entry.id)

    def _directory(self, clean: str) -> pygit2.Tree | None:
        found = self._directories.get(clean)
        if found is None:
            entry = self._entry(clean)
            # (a path under a submodule: its commit is in another repository, not here)
            is_tree = entry is not None and entry.filemode == pygit2.enums.FileMode.TREE
            loaded = self._repo[entry.id] if entry is not None and is_tree else None
            if not isinstance(loaded, pygit2.Tree):
                return None
            found = self._directories[clean] = loaded
        return found

    def kind(self, path: str) -> EntryKind | None:
        """By the entry's mode: a file's kind needs none of its content (loading the blob
        inflated the whole file, only to be read again by `read`)."""
        clean = normalize_path(path)
        if not clean:
            return "dir"
        entry = self._entry(clean)
        if entry is None or entry.filemode == pygit2.enums.FileMode.COMMIT:
            return None  # (a submodule's commit is in another repository: nothing here)
        return "dir" if entry.filemode == pygit2.enums.FileMode.TREE else "file"

    def files(self, path: str = "") -> list[str]:
        return sorted(name for name, _id, _mode in self._walk(path))

    def names(self, path: str = "") -> list[str]:
        obj = self._object(path)
        if not isinstance(obj, pygit2.Tree):
            raise PathNotFound(path or "/", f"{self._description} (not a directory)")
        return sorted(str(entry.name) for entry in obj)

    def _walk(self, path: str) -> Iterator[tuple[str, pygit2.Oid, int]]:
        """Every file under directory `path` (links too): its path, id and mode."""
        clean = normalize_path(path)
        obj = self._object(clean)
        if not isinstance(obj, pygit2.Tree):
            raise PathNotFound(path or "/", f"{self._description} (not a directory)")
        prefix = f"{clean}/" if clean else ""
        yield from self._walk_tree(obj, prefix)

    def _walk_tree(self, tree: pygit2.Tree, prefix: str) -> Iterator[tuple[str, pygit2.Oid, int]]:
        """By the entries' modes: a walk loads directories, no file's content (a render lists
        its path, then reads each file; the listing inflated each one too)."""
        for entry in tree:
            mode = int(entry.filemode)
            if mode == pygit2.enums.FileMode.TREE:
                child = self._repo[entry.id]
                if isinstance(child, pygit2.Tree):
                    yield from self._walk_tree(child, f"{prefix}{entry.name}/")
            elif mode != pygit2.enums.FileMode.COMMIT:  # (a submodule: not content here)
                yield f"{prefix}{entry.name}", entry.id, mode

    def _link_target(self, path: str, link: pygit2.Blob) -> str:
        """The repository path a symlink at `path` points to; it must stay in the repository."""
        target = bytes(link.data).decode(errors="replace")
        parent = normalize_path(path).rpartition("/")[0]
        escaping = LinkLeavesRepository(
            path, f"{self._description} ({EscapingLink(path, target).message})"
        )
        if target.startswith("/"):
            raise escaping
        try:
            return normalize_path(f"{parent}/{target}")
        except PathNotFound:
            raise escaping from None

    def read(self, path: str) -> bytes:
        """The file's bytes; a symlink inside the repository is followed, as Argo CD does."""
        current = normalize_path(path)
        for _hop in range(_MAX_LINK_HOPS):
            entry = self._entry(current) if current else None
            # (a submodule's commit is in another repository: not a file here)
            gitlink = entry is not None and entry.filemode == pygit2.enums.FileMode.COMMIT
            obj = self._repo[entry.id] if entry is not None and not gitlink else None
            if not isinstance(obj, pygit2.Blob) or entry is None:
                raise PathNotFound(path, self._description)
            if entry.filemode != pygit2.enums.FileMode.LINK:
                return bytes(obj.data)
            current = self._link_target(current, obj)
        raise PathNotFound(path, f"{self._description} (too many symlink hops)")

    def _write_link_end(self, destination: Path, link: Path, end: str) -> tuple[EscapingLink, ...]:
        """In place of `link`, written under `destination`: the file it leads to (`end`,
        outside what `materialize` writes), or a link to directory `end` written at its own
        path; a link to nothing stays one (the tool reports the file missing)."""
        if self._directory(end) is None:
            try:
                link.write_bytes(self.read(end))
            except PathNotFound:
                os.symlink(os.path.relpath(destination / end, link.parent), link)
            return ()
        written = destination / end
        found = () if written.exists() else self.materialize(destination, end)
        os.symlink(os.path.relpath(written, link.parent), link)
        return found

    def object_id(self, path: str = "") -> str:
        # The tree entry names the id: loading the object (a blob's whole content) is not needed.
        clean = normalize_path(path)
        if not clean:
            return str(self._tree.id)
        entry = self._entry(clean)
        if entry is None:
            raise PathNotFound(path, self._description)
        return str(entry.id)

    def links_leaving(self, path: str, *, recursive: bool) -> list[str]:
        """Where the symlinks in directory `path` (and below it when `recursive`) lead when
        that is outside `path`, as repository paths, followed link by link as `read` follows
        them: a reader of `path` reads those too. Links that leave the repository or loop are
        left out (nothing reads through them)."""
        clean = normalize_path(path)
        directory = self._directory(clean)
        if directory is None:
            return []
        prefix = f"{clean}/" if clean else ""
        found = {
            target
            for link in self._links(directory, prefix, recursive=recursive)
            if (target := self._link_end(link)) is not None
        }
        return sorted(t for t in found if t != clean and not t.startswith(prefix))

    def _links(self, tree: pygit2.Tree, prefix: str, *, recursive: bool) -> Iterator[str]:
        """The paths of the symlinks in `tree` (named by `prefix`), by tree entry mode alone."""
        for entry in tree:
            if entry.filemode == pygit2.enums.FileMode.LINK:
                yield f"{prefix}{entry.name}"
            elif recursive and entry.type_str == "tree":
                subtree = self._repo[entry.id]
                assert isinstance(subtree, pygit2.Tree)
                yield from self._links(subtree, f"{prefix}{entry.name}/", recursive=True)

    def _link_end(self, path: str) -> str | None:
        """The path the link at `path` finally leads to (which may not exist), or None."""
        current = path
        for _hop in range(_MAX_LINK_HOPS):
            entry = self._entry(current) if current else None
            if entry is None or entry.filemode != pygit2.enums.FileMode.LINK:
                return current
            link = self._repo[entry.id]
            assert isinstance(link, pygit2.Blob)
            try:
                current = self._link_target(current, link)
            except PathNotFound:
                return None
        return None

    def materialize(self, destination: Path, path: str = "") -> tuple[EscapingLink, ...]:
        """Write directory `path` under `destination` at its repository paths. A link is
        written as a link, except one that leads out of `path` (elsewhere in the repository,
        which Argo CD's checkout holds): a file is written in its place, a directory at its
        own path with the link to it. Links that leave the repository are returned, not
        written."""
        escaping: list[EscapingLink] = []
        clean = normalize_path(path)
        for name, oid, mode in self._walk(path):
            blob = self._repo[oid]
            if not isinstance(blob, pygit2.Blob):
                continue  # (an entry whose mode says file but whose object is not one)
            target = destination / name
            target.parent.mkdir(parents=True, exist_ok=True)
            if mode == pygit2.enums.FileMode.LINK:
                link = bytes(blob.data).decode(errors="replace")
                try:
                    self._link_target(name, blob)
                except PathNotFound:
                    escaping.append(EscapingLink(name, link))
                    continue
                end = self._link_end(name)
                if end is not None and not _within(end, clean):
                    escaping += self._write_link_end(destination, target, end)
                    continue
                os.symlink(link, target)
                continue
            target.write_bytes(blob.data)
            if mode == pygit2.enums.FileMode.BLOB_EXECUTABLE:
                target.chmod(0o755)
        return tuple(escaping)


def _within(path: str, directory: str) -> bool:
    """Whether repository path `path` is `directory` or under it ("" holds every path)."""
    return not directory or path == directory or path.startswith(f"{directory}/")


def _plain_directory(path: str) -> bool:
    """Whether `path` is a directory itself, not a link to one (nor anything else)."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


# Opens a regular file that is no link itself; a FIFO opens without waiting for a writer
# (and is then refused as no regular file).
_PLAIN_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def _regular_file_content(full: str) -> bytes | None:
    """The bytes of `full` when it is a regular file and not a link; None for anything else.

    `os.open`, `fstat` and `os.read` rather than `open(...).read()`: this runs once per
    manifest of a `headway check`, and Python's file objects cost as much again as the
    reading (a buffer, a second `fstat`, an `isatty` call), plus the `lstat` asked first."""
    try:
        descriptor = os.open(full, _PLAIN_OPEN_FLAGS)
    except OSError:
        return None  # a link (ELOOP), nothing there, no permission: `read` says which
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            return None
        return _read_to_end(descriptor, status.st_size)
    finally:
        os.close(descriptor)


def _read_to_end(descriptor: int, size: int) -> bytes:
    """Everything in `descriptor` up to its end, expected to be `size` bytes (more if the
    file grew meanwhile)."""
    chunks = [os.read(descriptor, size + 1)]
    while chunks[-1]:
        chunks.append(os.read(descriptor, 1 << 16))
    return b"".join(chunks)


class FilesystemTree:
    """A directory on disk (a working copy), read the same way; `.git` is ignored."""

    def __init__(self, root: Path) -> None:
        self._root = root.resolve()
        self._root_text = str(self._root)
        # Real paths of directories read so far: a reader lives for one run (`headway check`),
        # so each directory's links are resolved once, not once per file in it.
        self._real_dirs: dict[str, str] = {"": self._root_text}
        # Each directory's names as `files` walked it (for the same reason): a check's
        # renders ask `names` of every app path, one `listdir` each, of directories the
        # listing had just walked.
        self._walked_names: dict[str, list[str]] = {}

    @property
    def description(self) -> str:
        return str(self._root)

    def _full(self, path: str) -> Path:
        clean = normalize_path(path)
        return self._root / clean if clean else self._root

    def kind(self, path: str) -> EntryKind | None:
        full = self._full(path)
        if full.is_dir():
            return "dir"
        return "file" if full.is_file() else None

    def files(self, path: str = "") -> list[str]:
        base = self._full(path)
        if not base.is_dir():
            raise PathNotFound(path or "/", f"{self._root} (not a directory)")
        found: list[str] = []
        inside = self._root_text.rstrip("/") + "/"  # each walked directory's path starts so
        for dirpath, dirnames, filenames in os.walk(base):
            rel = dirpath[len(inside) :] if dirpath != self._root_text else ""
            # (the directory's whole listing, as `names` gives it: os.walk splits it in two)
            self._walked_names[rel] = sorted(n for n in (*dirnames, *filenames) if n != ".git")
            # A link to a directory is an entry, as in a Git tree, never walked into (Argo
            # CD's walk does not follow it either); the render says what it skips.
            links = [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]
            dirnames[:] = [d for d in dirnames if d != ".git" and d not in links]
            found.extend(f"{rel}/{f}" if rel else f for f in (*filenames, *links))
        return sorted(found)

    def names(self, path: str = "") -> list[str]:
        walked = self._walked_names.get(normalize_path(path))
        if walked is not None:
            return list(walked)
        base = self._full(path)
        if not base.is_dir():
            raise PathNotFound(path or "/", f"{self._root} (not a directory)")
        return sorted(name for name in os.listdir(base) if name != ".git")

    def _real_dir(self, clean: str) -> str:
        """The real path of directory `clean` (normalized), resolved once per reader: from its
        parent's real path when its own name is no link (one `lstat`), else in full."""
        real = self._real_dirs.get(clean)
        if real is None:
            parent, _, name = clean.rpartition("/")
            real = os.path.join(self._real_dir(parent), name)
            if not _plain_directory(real):
                real = os.path.realpath(os.path.join(self._root_text, clean))
            self._real_dirs[clean] = real
        return real

    def _leaves_root(self, clean: str) -> bool:
        """Whether `clean` (normalized), or a directory above it, links out of the root."""
        parent, _, name = clean.rpartition("/")
        real = os.path.join(self._real_dir(parent), name) if name else self._root_text
        if os.path.islink(real):
            real = os.path.realpath(real)
        return real != self._root_text and not real.startswith(self._root_text + os.sep)

    def _plain_file_inside(self, clean: str, full: str) -> bytes | None:
        """The content of `clean` when it is a regular file, not a link, in a directory inside
        the root: the common case `read` answers with one `open` and one `fstat`; None for any
        other (which `read` checks step by step)."""
        if not clean or self._leaves_root_above(clean):
            return None
        return _regular_file_content(full)

    def _leaves_root_above(self, clean: str) -> bool:
        """Whether a directory above `clean` (normalized, not empty) links out of the root."""
        parent, _, name = clean.rpartition("/")
        real = os.path.join(self._real_dir(parent), name)
        return not real.startswith(self._root_text + os.sep)

    def _escaping(self, path: str) -> EscapingLink | None:
        """The link at `path`, or one of its parent directories, when it leaves the root."""
        if not self._leaves_root(normalize_path(path)):
            return None
        full = self._full(path)
        current = full
        while current != self._root and not current.is_symlink():
            current = current.parent
        link = current.relative_to(self._root).as_posix()
        return EscapingLink(link, os.readlink(current) if current.is_symlink() else str(full))

    def read(self, path: str) -> bytes:
        clean = normalize_path(path)  # strings, not Path: this runs once per file of a check
        full = os.path.join(self._root_text, clean) if clean else self._root_text
        content = self._plain_file_inside(clean, full)
        if content is not None:
            return content
        if not os.path.isfile(full):
            raise PathNotFound(path, self._root_text)
        escaping = self._escaping(path) if self._leaves_root(clean) else None
        if escaping is not None:
            raise LinkLeavesRepository(path, f"{self._root} ({escaping.message})")
        with open(full, "rb") as file:
            return file.read()

    def object_id(self, path: str = "") -> str:
        """A hash over every file's path and content (a directory has no Git id on disk)."""
        kind = self.kind(path)
        if kind is None:
            raise PathNotFound(path, str(self._root))
        if kind == "file":
            return str(pygit2.hash(self.read(path)))
        digest = hashlib.sha256()
        for name in self.files(path):
            digest.update(name.encode() + b"\0" + self._content_id(name).encode())
        return digest.hexdigest()

    def _content_id(self, name: str) -> str:
        """A file's Git id; for a link that leaves the root or dangles, an id of its target."""
        full = self._full(name)
        escaping = self._escaping(name)
        if escaping is not None or not full.is_file():
            target = escaping.target if escaping is not None else os.readlink(full)
            return str(pygit2.hash(f"symlink {target}".encode()))
        return str(pygit2.hash(full.read_bytes()))

    def materialize(self, destination: Path, path: str = "") -> tuple[EscapingLink, ...]:
        escaping: list[EscapingLink] = []
        for name in self.files(path):
            link = self._escaping(name)
            if link is not None:
                escaping.append(link)
                continue
            if not self._full(name).is_file():
                continue  # a dangling link inside the root: the tool reports it missing
            target = destination / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(self.read(name))
            target.chmod(self._full(name).stat().st_mode & 0o777)  # keep executables runnable
        return tuple(escaping)
