"""Chart archives unpacked on disk, kept across restarts: a chart version fetched once
renders again with its repository down (an offline rollback to it, say).

Layout under the cache root: `<sha256 of the repository URL>/<chart>/<version>/<digest>/`
holds `chart/` (the unpacked archive) and `entry.json` (URL, chart, version, digest), written
last: a directory without it is an interrupted download and is never read. Entries are
written to a temporary directory and renamed into place, so two processes never see half a
chart. `digest` is the index's sha256 of the archive, or `none` when the index gives none.

Unpacking refuses what a hostile archive could do: absolute paths, `..`, links, devices
(Python's `tarfile` data filter), more than `MAX_FILES` members or `MAX_UNPACKED_BYTES`.
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
from dataclasses import dataclass
from pathlib import Path

from headway.source.errors import PathNotFound
from headway.source.helm_index import HelmRepositoryError
from headway.source.tree import FilesystemTree, normalize_path

__all__ = [
    "MAX_FILES",
    "MAX_UNPACKED_BYTES",
    "CachedChart",
    "ChartCache",
    "ChartRef",
    "ChartTree",
    "unpack_chart",
]

MAX_FILES = 10_000
MAX_UNPACKED_BYTES = 256 * 1024 * 1024
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
    """Unpacked charts under `root`, looked up by repository, chart, version and digest."""

    def __init__(self, root: Path) -> None:
        self.root = root

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
        return CachedChart(ref, ChartTree(chart_dir, ref))

    def store(self, ref: ChartRef, data: bytes) -> CachedChart:
        """Unpack `data` as the archive of `ref` and keep it; returns the stored chart."""
        final = self._entry_dir(ref)
        final.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".unpack-", dir=final.parent))
        try:
            chart_dir = unpack_chart(data, staging / "chart", ref)
            meta = {**ref.__dict__, "directory": chart_dir.relative_to(staging).as_posix()}
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
        return stored
