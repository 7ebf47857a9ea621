"""Chart archives unpacked on disk, kept across restarts: a chart version fetched once
renders again with its repository down (an offline rollback to it, say).

Layout under the cache root: `<sha256 of the repository URL>/<chart>/<version>/<digest>/`
holds `chart/` (the unpacked archive) and `entry.json` (URL, chart, version, digest), written
last: a directory without it is an interrupted download and is never read. Entries are
written to a temporary directory and renamed into place, so two processes never see half a
chart. `digest` is the index's sha256 of the archive, or `none` when the index gives none.

Unpacking refuses what a hostile archive could do: absolute paths, `..`, links, devices
(Python's `tarfile` data filter), more than `MAX_FILES` members or `MAX_UNPACKED_BYTES`.

The cache is bounded: after each store, while its entries hold more than `max_bytes`, the
least recently used entry (its `used` file's mtime, touched on every read and store) is
removed, except the versions `keep()` names — what Applications render, synced or may roll
back to (their history), so the offline rollback to a synced version never finds its chart
gone — the entry just stored, and every chart fetched as another chart's dependency (which
synced revision of a Git chart needs it is not known here; locked versions are few). When
`keep()` cannot say (None), nothing is removed. A removed entry is renamed aside first, so a
reader never sees half of one.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import re
import shutil
import tarfile
import tempfile
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from headway.source.errors import PathNotFound
from headway.source.helm_index import HelmRepositoryError
from headway.source.tree import FilesystemTree, normalize_path

__all__ = [
    "DEFAULT_MAX_BYTES",
    "MAX_FILES",
    "MAX_UNPACKED_BYTES",
    "CacheEntry",
    "CachedChart",
    "ChartCache",
    "ChartRef",
    "ChartTree",
    "ChartVersionKey",
    "KeepVersions",
    "to_evict",
    "unpack_chart",
]

MAX_FILES = 10_000
MAX_UNPACKED_BYTES = 256 * 1024 * 1024
DEFAULT_MAX_BYTES = 1024 * 1024 * 1024
_USED = "used"  # an empty file: its mtime is when the entry was last read or stored
_DEPENDENCY = "dependency"  # an empty file: the entry is another chart's dependency

ChartVersionKey = tuple[str, str, str]
"""(repository URL, chart, version): what an Application pins, whatever the digest."""
KeepVersions = Callable[[], Collection[ChartVersionKey] | None]
_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,200}")


@dataclass(frozen=True)
class ChartRef:
    """A chart pinned to one archive: what its render depends on."""

    url: str
    chart: str
    version: str
    digest: str

    @property
    def identity(self) -> str:
        return f"helm:{self.url} {self.chart} {self.version} sha256:{self.digest or 'none'}"


class ChartTree(FilesystemTree):
    """An unpacked chart (its `Chart.yaml` at the root); its identity is the chart's
    repository, name, version and digest, not a hash of every file."""

    def __init__(self, root: Path, ref: ChartRef) -> None:
        super().__init__(root)
        self.ref = ref

    @property
    def description(self) -> str:
        return f"chart {self.ref.chart} {self.ref.version} from {self.ref.url}"

    def object_id(self, path: str = "") -> str:
        return self.ref.identity if not normalize_path(path) else super().object_id(path)


@dataclass(frozen=True)
class CachedChart:
    ref: ChartRef
    tree: ChartTree


@dataclass(frozen=True)
class CacheEntry:
    """A stored chart as eviction weighs it."""

    path: Path
    version: ChartVersionKey
    size: int  # bytes of its unpacked files
    used_ns: int  # when it was last read or stored
    dependency: bool = False  # fetched as another chart's dependency: never evicted


def to_evict(
    entries: Sequence[CacheEntry], *, max_bytes: int, keep: Collection[ChartVersionKey]
) -> list[CacheEntry]:
    """The entries to remove so that the rest fit in `max_bytes`: least recently used first,
    never one whose version is in `keep` (then the rest may stay over the bound). Purely
    computational."""
    total = sum(e.size for e in entries)
    chosen: list[CacheEntry] = []
    for entry in sorted(entries, key=lambda e: (e.used_ns, str(e.path))):
        if total <= max_bytes:
            break
        if entry.dependency or entry.version in keep:
            continue
        chosen.append(entry)
        total -= entry.size
    return chosen


def _mark_used(entry: Path) -> None:
    """Now is when `entry` was last used: set to the nanosecond (a file's own timestamps
    follow the kernel's coarse clock, which would tie uses milliseconds apart)."""
    now = time.time_ns()
    with contextlib.suppress(OSError):  # a read-only cache is still read
        (entry / _USED).touch()
        os.utime(entry / _USED, ns=(now, now))


def _tree_bytes(root: Path) -> int:
    total = 0
    for folder, _dirs, files in os.walk(root):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(folder, name)).st_size
    return total


def _members(archive: tarfile.TarFile, ref: ChartRef) -> list[tarfile.TarInfo]:
    members = archive.getmembers()
    if len(members) > MAX_FILES:
        raise HelmRepositoryError(ref.url, ref.chart, f"archive has over {MAX_FILES} entries")
    if sum(m.size for m in members if m.isfile()) > MAX_UNPACKED_BYTES:
        limit = MAX_UNPACKED_BYTES // (1024 * 1024)
        raise HelmRepositoryError(ref.url, ref.chart, f"archive unpacks to over {limit} MiB")
    for member in members:
        parts = member.name.replace("\\", "/").split("/")
        if member.name.startswith(("/", "\\")) or ".." in parts:
            reason = f"archive entry {member.name!r} leaves the chart directory"
            raise HelmRepositoryError(ref.url, ref.chart, reason)
        if not (member.isfile() or member.isdir()):
            kind = "link" if member.issym() or member.islnk() else "special file"
            reason = f"archive entry {member.name!r} is a {kind}; charts hold plain files only"
            raise HelmRepositoryError(ref.url, ref.chart, reason)
    return members


def unpack_chart(data: bytes, destination: Path, ref: ChartRef) -> Path:
    """Unpack a chart archive into `destination`; returns the chart directory (the one
    top-level directory holding `Chart.yaml`, preferably the one named after the chart)."""
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as archive:
            members = _members(archive, ref)
            archive.extractall(destination, members=members, filter="data")
    except (tarfile.TarError, OSError, EOFError) as err:
        reason = f"the archive cannot be unpacked: {err}"
        raise HelmRepositoryError(ref.url, ref.chart, reason) from None
    candidates = [ref.chart, *sorted(p.name for p in destination.iterdir() if p.is_dir())]
    for name in candidates:
        if (destination / name / "Chart.yaml").is_file():
            return destination / name
    raise HelmRepositoryError(ref.url, ref.chart, "the archive has no <chart>/Chart.yaml")


def _segment(text: str) -> str:
    """A path segment for a name from the index: itself when plain, else its hash."""
    if _SAFE_NAME.fullmatch(text) and text not in (".", ".."):
        return text
    return "h-" + hashlib.sha256(text.encode()).hexdigest()[:32]


class ChartCache:
    """Unpacked charts under `root`, looked up by repository, chart, version and digest;
    at most `max_bytes` of them beyond the versions `keep()` names."""

    def __init__(
        self,
        root: Path,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        keep: KeepVersions = lambda: (),
    ) -> None:
        if max_bytes < 0:
            raise ValueError(f"the chart cache's size bound must be >= 0, not {max_bytes}")
        self.root = root
        self.max_bytes = max_bytes
        self._keep = keep

    def _version_dir(self, url: str, chart: str, version: str) -> Path:
        repo = hashlib.sha256(url.encode()).hexdigest()[:32]
        return self.root / repo / _segment(chart) / _segment(version)

    def _entry_dir(self, ref: ChartRef) -> Path:
        version_dir = self._version_dir(ref.url, ref.chart, ref.version)
        return version_dir / (ref.digest or "none")

    def get(self, ref: ChartRef) -> CachedChart | None:
        return self._load(self._entry_dir(ref))

    def latest(self, url: str, chart: str, version: str) -> CachedChart | None:
        """The most recently stored archive of that version, whatever its digest (for a
        version pinned exactly while the repository's index cannot be read)."""
        version_dir = self._version_dir(url, chart, version)
        if not version_dir.is_dir():
            return None
        marked = [d / "entry.json" for d in version_dir.iterdir() if (d / "entry.json").is_file()]
        for marker in sorted(marked, key=lambda m: m.stat().st_mtime_ns, reverse=True):
            found = self._load(marker.parent)
            if found is not None:
                return found
        return None

    def _load(self, entry: Path) -> CachedChart | None:
        try:
            meta = json.loads((entry / "entry.json").read_text())
            ref = ChartRef(meta["url"], meta["chart"], meta["version"], meta["digest"])
            chart_dir = entry / str(meta["directory"])
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if not (chart_dir / "Chart.yaml").is_file():
            return None
        _mark_used(entry)
        return CachedChart(ref, ChartTree(chart_dir, ref))

    def store(self, ref: ChartRef, data: bytes) -> CachedChart:
        """Unpack `data` as the archive of `ref` and keep it; returns the stored chart."""
        final = self._entry_dir(ref)
        final.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".unpack-", dir=final.parent))
        try:
            chart_dir = unpack_chart(data, staging / "chart", ref)
            meta = {
                **ref.__dict__,
                "directory": chart_dir.relative_to(staging).as_posix(),
                "bytes": _tree_bytes(staging / "chart"),
            }
            (staging / "entry.json").write_text(json.dumps(meta, sort_keys=True))
            if final.exists() and self._load(final) is None:
                # A damaged copy; never a readable one, which another render may be reading.
                shutil.rmtree(final, ignore_errors=True)
            with contextlib.suppress(OSError):  # already stored (same digest): that one stays
                os.rename(staging, final)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        stored = self.get(ref)
        if stored is None:
            raise PathNotFound(str(final), "the chart cache (it could not be written)")
        self.evict(also_keep=(ref.url, ref.chart, ref.version))
        return stored

    def entries(self) -> Iterator[CacheEntry]:
        """Every readable entry (`<repo>/<chart>/<version>/<digest>/entry.json`)."""
        for marker in self.root.glob("*/*/*/*/entry.json"):
            entry = marker.parent
            if entry.name.startswith("."):  # a download being renamed into place
                continue
            try:
                meta = json.loads(marker.read_text())
                version = (str(meta["url"]), str(meta["chart"]), str(meta["version"]))
                used = entry / _USED
                used_ns = (used if used.exists() else marker).stat().st_mtime_ns
            except (OSError, ValueError, KeyError, TypeError):
                continue
            size = meta.get("bytes")
            if not isinstance(size, int):  # stored before sizes were recorded
                size = _tree_bytes(entry / "chart")
            yield CacheEntry(entry, version, size, used_ns, (entry / _DEPENDENCY).exists())

    def mark_dependency(self, chart: CachedChart) -> None:
        """Keep `chart` for good: a chart's dependency, which a synced revision of a Git chart
        may need offline, though no Application status names it."""
        entry = self._entry_dir(chart.ref)
        with contextlib.suppress(OSError):
            (entry / _DEPENDENCY).touch()

    def evict(self, *, also_keep: ChartVersionKey | None = None) -> list[Path]:
        """Remove least recently used entries until the cache fits `max_bytes` (never a kept
        version, nor `also_keep`); the entries removed."""
        entries = list(self.entries())
        if sum(e.size for e in entries) <= self.max_bytes:
            return []
        keep = self._keep()
        if keep is None:  # what Applications pin is unknown now: remove nothing
            return []
        kept = {*keep, also_keep} if also_keep is not None else set(keep)
        removed = []
        for victim in to_evict(entries, max_bytes=self.max_bytes, keep=kept):
            aside = Path(tempfile.mkdtemp(prefix=".evicted-", dir=self.root))
            try:
                os.rename(victim.path, aside / "entry")
                removed.append(victim.path)
            except OSError:
                pass  # removed meanwhile (another process evicting too)
            shutil.rmtree(aside, ignore_errors=True)
        return removed
