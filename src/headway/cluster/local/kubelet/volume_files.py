"""Pod sandboxes on disk: each Pod's volumes as real files, in the kubelet's layout.

A file-backed volume's directory holds a timestamped directory with the files, a `..data`
symlink to it, and one symlink per top-level name (`app.yaml -> ..data/app.yaml`). An update
writes a new timestamped directory and swaps `..data` with one rename, so a reader sees the
old set of files or the new one, never a mix — what Kubernetes' atomic writer does, and what
programs that watch `..data` rely on. A `subPath` mount of such a volume is a copy made when
the container starts, so, as in Kubernetes, it does not follow later updates; a `subPath` of
an `emptyDir` or a claim is the live directory (created when missing), shared with the
volume. A claim's volume is its bound directory under `<state>/volumes`, not the sandbox.

Layout: `<state>/pods/<namespace>/<pod>-<uid>/volumes/<volume>` and
`.../subpaths/<container>/<n>`. The sandbox is removed when the Pod's processes are gone.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from headway.cluster.local.kubelet.podenv import EnvConfigError, ObjectLookup
from headway.cluster.local.kubelet.volumes import VolumeFile, container_mounts, volume_plan

__all__ = ["PodSandboxes", "write_volume"]

_DATA = "..data"


def write_volume(root: Path, files: Sequence[VolumeFile]) -> bool:
    """Make `root` hold exactly `files`; False when it already did (nothing written)."""
    if _current(root) == {f.path: (f.data, f.mode) for f in files}:
        return False
    root.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("..%Y_%m_%d_%H_%M_%S", time.gmtime()) + f".{time.time_ns() % 10**9}"
    fresh = root / stamp
    fresh.mkdir()
    for file in files:
        target = fresh / file.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(file.data)
        target.chmod(file.mode)
    old = os.readlink(root / _DATA) if (root / _DATA).is_symlink() else None
    swap = root / "..data_tmp"
    if swap.is_symlink():
        swap.unlink()
    os.symlink(stamp, swap)
    os.replace(swap, root / _DATA)
    top = {f.path.split("/")[0] for f in files}
    for name in top:
        if not (root / name).is_symlink():
            os.symlink(f"{_DATA}/{name}", root / name)
    for entry in root.iterdir():
        if not entry.name.startswith("..") and entry.name not in top:
            entry.unlink()
    if old and old != stamp:
        shutil.rmtree(root / old, ignore_errors=True)
    return True


def _current(root: Path) -> dict[str, tuple[bytes, int]] | None:
    data = root / _DATA
    if not data.is_dir():
        return None
    found = {}
    for path in data.rglob("*"):
        if path.is_file():
            found[path.relative_to(data).as_posix()] = (path.read_bytes(),
                                                        path.stat().st_mode & 0o7777)
    return found


class PodSandboxes:
    """The sandboxes of the Pods this kubelet runs, under `root` (`<state>/pods`)."""

    def __init__(self, root: Path) -> None:
        self._root = root
        # What each volume directory was last made to hold: a refresh that finds the same
        # content reads no files back.
        self._written: dict[Path, tuple[VolumeFile, ...]] = {}

    def sandbox(self, pod: Mapping[str, Any]) -> Path:
        meta = pod["metadata"]
        namespace = str(meta.get("namespace") or "default")
        return self._root / namespace / f"{meta['name']}-{str(meta.get('uid', ''))[:8]}"

    def write_volumes(self, pod: Mapping[str, Any], lookup: ObjectLookup) -> dict[str, Path]:
        """Bring every volume of `pod` up to date; its directory by volume name."""
        where = self.sandbox(pod) / "volumes"
        dirs = {}
        for volume in (pod.get("spec") or {}).get("volumes") or []:
            plan = volume_plan(pod, volume, lookup)
            path = where / plan.name
            if plan.host_dir:
                path = Path(plan.host_dir)
                path.mkdir(parents=True, exist_ok=True)
            elif plan.files is None:
                path.mkdir(parents=True, exist_ok=True)
            elif self._written.get(path) != plan.files or not path.is_dir():
                write_volume(path, plan.files)
                self._written[path] = plan.files
            dirs[plan.name] = path
        return dirs

    def mount_places(
        self, pod: Mapping[str, Any], container: Mapping[str, Any], lookup: ObjectLookup
    ) -> list[tuple[str, str]]:
        """(mount path, host path) of each of the container's mounts, longest mount path
        first, with the volumes written and `subPath` copies made for this start."""
        dirs = self.write_volumes(pod, lookup)
        writable = _writable_volumes(pod)
        places = []
        for index, mount in enumerate(container_mounts(container)):
            if mount.volume not in dirs:
                raise EnvConfigError(f'volumeMount "{mount.mount_path}": no volume named '
                                     f'"{mount.volume}"')
            host = dirs[mount.volume]
            if mount.sub_path and mount.volume in writable:
                host = _sub_directory(host, mount.sub_path)
            elif mount.sub_path:
                copy = self.sandbox(pod) / "subpaths" / str(container.get("name")) / str(index)
                host = _copied(host / mount.sub_path, copy)
            places.append((mount.mount_path, str(host)))
        return places

    def remove(self, pod: Mapping[str, Any]) -> None:
        sandbox = self.sandbox(pod)
        shutil.rmtree(sandbox, ignore_errors=True)
        for path in [p for p in self._written if p.is_relative_to(sandbox)]:
            del self._written[path]


def _writable_volumes(pod: Mapping[str, Any]) -> set[str]:
    """Volumes a container writes into (a claim, an `emptyDir`): a `subPath` of one is the
    live directory, shared with other mounts, not a copy."""
    return {
        str(v.get("name"))
        for v in (pod.get("spec") or {}).get("volumes") or []
        if "persistentVolumeClaim" in v or "emptyDir" in v
    }


def _sub_directory(root: Path, sub_path: str) -> Path:
    """`root/sub_path`, created as a directory when missing (as the kubelet does); a path
    that leaves the volume is refused."""
    parts = PurePosixPath(sub_path).parts
    if sub_path.startswith("/") or ".." in parts:
        raise EnvConfigError(f'subPath "{sub_path}" must be relative and stay inside its volume')
    path = root.joinpath(*parts)
    if not path.exists():
        path.mkdir(parents=True)
    return path


def _copied(source: Path, copy: Path) -> Path:
    """A fresh copy of `source` (file or directory) at `copy`; an empty directory when the
    volume has no such path, as Kubernetes creates a missing subPath."""
    if copy.is_dir() and not copy.is_symlink():
        shutil.rmtree(copy)
    elif copy.exists() or copy.is_symlink():
        copy.unlink()
    copy.parent.mkdir(parents=True, exist_ok=True)
    if source.is_dir():
        shutil.copytree(source, copy, symlinks=False)
    elif source.is_file():
        shutil.copy2(source, copy)
    else:
        copy.mkdir()
    return copy
