"""Which files of a commit may hold a CustomResourceDefinition, kept between runs by tree id.

In a Git checkout `headway check` compares the base commit's CRDs (HEAD's, or its parent's)
with the checked tree's (HW104). Finding them read every blob of that commit on every run
(about a fifth of a pre-commit run at 1,000 Applications), though a commit's tree never
changes. `crd_candidates` is the filter (YAML files, not hidden, whose bytes name the kind);
its answer for a tree is kept under the tree's id, and a run that finds it reads and parses
only those files. The cache file names a hash of this module's source, so a changed filter
never reuses an old answer; a damaged or foreign file is ignored, one that cannot be written
left alone, and `headway check --no-cache` neither reads nor writes it.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from headway.cli import check_cache_files
from headway.source.errors import PathNotFound
from headway.source.tree import GitTree, TreeReader

__all__ = ["CrdScans", "crd_candidates", "open_scans"]

_FORMAT = b"headway-check-crd-scans 1\n"
_PREFIX = "crdscans"


def crd_candidates(tree: TreeReader) -> tuple[str, ...]:
    """The files of `tree` that may hold a CustomResourceDefinition, in the tree's order.
    A name that cannot be read as a file (a symlink leaving the repository, dangling, or to a
    directory) holds none: the render that reaches it says why."""
    return tuple(
        file
        for file in tree.files()
        if file.endswith((".yaml", ".yml"))
        and not file.startswith(".")
        and b"CustomResourceDefinition" in _content(tree, file)
    )


def _content(tree: TreeReader, file: str) -> bytes:
    try:
        return tree.read(file)
    except PathNotFound:
        return b""


@functools.cache
def _fingerprint() -> bytes:
    """What a kept scan depends on besides the tree: this module's choice of candidates and
    the tree reader's listing and reading of files (`source/tree.py`); OSError when either
    source cannot be read (then nothing is kept)."""
    from headway.source import tree

    digest = hashlib.sha256(_FORMAT)
    for source in (Path(__file__), Path(tree.__file__)):
        digest.update(source.read_bytes())
    return digest.hexdigest().encode()


@dataclass
class CrdScans:
    """The answers read from one cache file (`known`) and those this run used or made."""

    file: Path | None
    known: dict[str, tuple[str, ...]] = field(default_factory=dict)
    used: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def candidates(self, tree: GitTree) -> tuple[str, ...]:
        key = tree.tree_id
        found = self.used.get(key, self.known.get(key))
        if found is None:
            found = crd_candidates(tree)
        self.used[key] = found
        return found

    def save(self) -> None:
        """Write the answers this run used when they differ from what was read, else mark
        the file used; a cache that cannot be written is left as it was."""
        if self.file is None:
            return
        if self.used.keys() == self.known.keys():
            check_cache_files.mark_used(self.file)
            return
        content = check_cache_files.sealed(_FORMAT + _fingerprint() + b"\n", self.used)
        try:
            check_cache_files.replace_file(self.file, content, prefix=_PREFIX)
        except OSError:
            return


def open_scans(root: Path, *, directory: Path | None = None) -> CrdScans:
    """The kept answers for the directory `root` checks; none when there are none, when
    they cannot be trusted, or when this module's source cannot be read to fingerprint."""
    try:
        _fingerprint()
    except OSError:
        return CrdScans(None)
    file = check_cache_files.cache_file(root, prefix=_PREFIX, directory=directory)
    return CrdScans(file, _read(file))


def _read(file: Path) -> dict[str, tuple[str, ...]]:
    entries = check_cache_files.unsealed(file, _FORMAT + _fingerprint() + b"\n")
    if not isinstance(entries, dict):
        return {}
    return {
        key: paths
        for key, paths in entries.items()
        if isinstance(key, str)
        and isinstance(paths, tuple)
        and all(isinstance(p, str) for p in paths)
    }
