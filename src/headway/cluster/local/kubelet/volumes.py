"""What a Pod's volumes hold, and where a container finds them. Purely computational.

`configMap`, `secret`, `downwardAPI` and `projected` volumes become files with Kubernetes'
names and modes (`items` choose keys and paths, `defaultMode` and an item's `mode` set
permissions; `binaryData` and Secret `data` are decoded); `emptyDir` is an empty directory
kept for the Pod's life. `volume_files.py` writes them with the kubelet's atomic layout.

Processes run on the host, so a `mountPath` such as `/etc/config` cannot be created there.
Each mount has a directory under the Pod's sandbox instead, and the container's `command`,
`args` and `env` values that name a path under a `mountPath` are rewritten to it
(`/etc/config/app.yaml` -> `<state>/pods/<ns>/<pod>/volumes/config/app.yaml`).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from headway.cluster.local.kubelet.podenv import EnvConfigError, ObjectLookup, field_value

__all__ = [
    "DEFAULT_MODE",
    "Mount",
    "VolumeFile",
    "VolumePlan",
    "container_mounts",
    "rewrite_mount_paths",
    "volume_plan",
]

DEFAULT_MODE = 0o644  # Kubernetes' default for configMap, secret, downwardAPI, projected
_FILE_SOURCES = ("configMap", "secret", "downwardAPI", "projected")


@dataclass(frozen=True)
class VolumeFile:
    path: str  # relative to the volume's root, `/`-separated (`conf/app.yaml`)
    data: bytes
    mode: int


@dataclass(frozen=True)
class VolumePlan:
    """One volume: `files` for a file-backed volume, None for an `emptyDir` or a claim;
    `host_dir` is a claim's bound directory (kept across Pods), "" otherwise."""

    name: str
    files: tuple[VolumeFile, ...] | None
    host_dir: str = ""


@dataclass(frozen=True)
class Mount:
    mount_path: str  # as the container asked (`/etc/config`)
    volume: str
    sub_path: str  # "" for the whole volume


def volume_plan(
    pod: Mapping[str, Any], volume: Mapping[str, Any], lookup: ObjectLookup
) -> VolumePlan:
    """The content of one of `pod`'s volumes; `EnvConfigError` when a source is missing (the
    container waits in `CreateContainerConfigError`) or the volume type is not supported."""
    name = str(volume.get("name") or "")
    if "emptyDir" in volume:
        return VolumePlan(name, None)
    if "persistentVolumeClaim" in volume:
        return VolumePlan(name, None, _claim_directory(volume["persistentVolumeClaim"], lookup))
    for kind in _FILE_SOURCES:
        if kind in volume:
            spec = volume.get(kind) or {}
            default = _mode(spec.get("defaultMode"), DEFAULT_MODE)
            files = _SOURCES[kind](pod, spec, lookup, default)
            return VolumePlan(name, tuple(sorted(files, key=lambda f: f.path)))
    kinds = sorted(k for k in volume if k != "name")
    raise EnvConfigError(f'volume "{name}": type {", ".join(kinds) or "(none)"} is not '
                         "supported by the local runtime")


def _claim_directory(spec: Mapping[str, Any], lookup: ObjectLookup) -> str:
    """The directory of the volume the claim is bound to; `EnvConfigError` until it is."""
    name = str((spec or {}).get("claimName") or "")
    claim = lookup("PersistentVolumeClaim", name)
    if claim is None:
        raise EnvConfigError(f'persistentvolumeclaim "{name}" not found')
    bound = str((claim.get("spec") or {}).get("volumeName") or "")
    if (claim.get("status") or {}).get("phase") != "Bound" or not bound:
        raise EnvConfigError(f'persistentvolumeclaim "{name}" is not bound yet')
    volume = lookup("PersistentVolume", bound)
    path = ((volume or {}).get("spec") or {}).get("hostPath", {}).get("path")
    if not path:
        raise EnvConfigError(f'persistentvolume "{bound}" of claim "{name}" has no local '
                             "directory (only volumes this runtime provisioned are mounted)")
    return str(path)


def _mode(raw: object, default: int) -> int:
    return raw if isinstance(raw, int) and not isinstance(raw, bool) else default


def _keyed_files(
    data: Mapping[str, bytes], spec: Mapping[str, Any], default: int, where: str
) -> list[VolumeFile]:
    items = spec.get("items")
    if not items:
        return [VolumeFile(key, value, default) for key, value in data.items()]
    files = []
    for item in items:
        key = str(item.get("key") or "")
        if key not in data:
            if spec.get("optional"):
                continue
            raise EnvConfigError(f'{where}: key "{key}" not found')
        files.append(VolumeFile(_relative(item.get("path"), key), data[key],
                                _mode(item.get("mode"), default)))
    return files


def _relative(raw: object, fallback: str) -> str:
    path = str(raw or fallback)
    parts = PurePosixPath(path).parts
    if path.startswith("/") or ".." in parts or not parts:
        raise EnvConfigError(f'volume item path "{path}" must be relative and stay inside')
    return "/".join(parts)


def _config_map(
    pod: Mapping[str, Any], spec: Mapping[str, Any], lookup: ObjectLookup, default: int
) -> list[VolumeFile]:
    name = str(spec.get("name") or "")
    obj = lookup("ConfigMap", name)
    if obj is None:
        if spec.get("optional"):
            return []
        raise EnvConfigError(f'configmap "{name}" not found')
    data = {str(k): str(v).encode() for k, v in (obj.get("data") or {}).items()}
    for key, value in (obj.get("binaryData") or {}).items():
        data[str(key)] = _decoded(value, f'configmap "{name}" binaryData "{key}"')
    return _keyed_files(data, spec, default, f'configmap "{name}"')


def _secret(
    pod: Mapping[str, Any], spec: Mapping[str, Any], lookup: ObjectLookup, default: int
) -> list[VolumeFile]:
    name = str(spec.get("secretName") or spec.get("name") or "")
    obj = lookup("Secret", name)
    if obj is None:
        if spec.get("optional"):
            return []
        raise EnvConfigError(f'secret "{name}" not found')
    data = {str(k): _decoded(v, f'secret "{name}" key "{k}"')
            for k, v in (obj.get("data") or {}).items()}
    data.update({str(k): str(v).encode() for k, v in (obj.get("stringData") or {}).items()})
    return _keyed_files(data, spec, default, f'secret "{name}"')


def _decoded(value: object, where: str) -> bytes:
    try:
        return base64.b64decode(str(value), validate=True)
    except binascii.Error as err:
        raise EnvConfigError(f"{where} is not valid base64: {err}") from err


def _downward_api(
    pod: Mapping[str, Any], spec: Mapping[str, Any], lookup: ObjectLookup, default: int
) -> list[VolumeFile]:
    files = []
    for item in spec.get("items") or []:
        if "fieldRef" not in item:
            raise EnvConfigError(f'downwardAPI item "{item.get("path")}": only fieldRef is '
                                 "supported by the local runtime")
        value = field_value(pod, str((item.get("fieldRef") or {}).get("fieldPath", "")))
        files.append(VolumeFile(_relative(item.get("path"), ""), value.encode(),
                                _mode(item.get("mode"), default)))
    return files


def _projected(
    pod: Mapping[str, Any], spec: Mapping[str, Any], lookup: ObjectLookup, default: int
) -> list[VolumeFile]:
    files: dict[str, VolumeFile] = {}
    for source in spec.get("sources") or []:
        for kind in ("configMap", "secret", "downwardAPI"):
            if kind in source:
                for file in _SOURCES[kind](pod, source.get(kind) or {}, lookup, default):
                    files[file.path] = file
        unsupported = sorted(set(source) - {"configMap", "secret", "downwardAPI"})
        if unsupported:
            raise EnvConfigError(f"projected source {', '.join(unsupported)} is not supported "
                                 "by the local runtime")
    return list(files.values())


_Source = Callable[[Mapping[str, Any], Mapping[str, Any], ObjectLookup, int], list[VolumeFile]]
_SOURCES: dict[str, _Source] = {
    "configMap": _config_map, "secret": _secret, "downwardAPI": _downward_api,
    "projected": _projected,
}


def container_mounts(container: Mapping[str, Any]) -> list[Mount]:
    """The container's `volumeMounts`, longest mount path first (the most specific wins)."""
    mounts = [
        Mount(str(m.get("mountPath") or "").rstrip("/") or "/", str(m.get("name") or ""),
              str(m.get("subPath") or ""))
        for m in container.get("volumeMounts") or []
    ]
    return sorted(mounts, key=lambda m: -len(m.mount_path))


def rewrite_mount_paths(text: str, places: Sequence[tuple[str, str]]) -> str:
    """`text` with each path under a mount path (`/etc/config`, `/etc/config/app.yaml`)
    replaced by the same path under its host directory; `places` is (mount path, host
    path), longest mount path first. `/etc/configuration` is not under `/etc/config`."""
    if not places:
        return text
    pattern = "|".join(re.escape(mount) for mount, _ in places)
    hosts = dict(places)
    found = re.compile(rf"(?<![\w.\-/])({pattern})(?=/|$|[^\w.\-])")
    return found.sub(lambda m: hosts[m.group(1)], text)
