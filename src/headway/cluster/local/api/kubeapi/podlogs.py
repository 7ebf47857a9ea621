"""The `pods/log` subresource: a container's output, read from the files the runtime's
kubelet writes (`<state>/logs/NS/POD/CONTAINER.log`, the run before the last restart in
`CONTAINER.previous.log`), so `kubectl logs` works as against a cluster.

Query parameters: `container` (needed when the Pod has several), `previous`, `tailLines`,
`limitBytes`, and `follow` (new output as it is written, until the Pod is deleted, the
container restarts or the client leaves). `timestamps` and `sinceSeconds` are ignored: the
files hold no timestamps.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path

from headway.cluster.errors import NotFound
from headway.cluster.local.api.kubeapi.operations import Request, get
from headway.cluster.local.api.kubeapi.status import ApiError
from headway.cluster.local.api.store import LocalCluster
from headway.model.obj import Obj
from headway.state_dir import container_log_path

__all__ = ["follow_log", "log_file", "read_log"]

_CHUNK = 64 * 1024


def _flag(req: Request, name: str) -> bool:
    return req.query.get(name, "").lower() in ("1", "true")


def _container(pod: Obj, req: Request) -> str:
    names = [str(c.get("name")) for c in (pod.get("spec") or {}).get("containers") or []]
    wanted = req.query.get("container", "")
    pod_name = req.path.name
    if not wanted:
        if len(names) == 1:
            return names[0]
        raise ApiError(400, "BadRequest", f"a container name must be specified for pod "
                                          f"{pod_name}, choose one of: [{' '.join(names)}]")
    if wanted not in names:
        raise ApiError(400, "BadRequest", f"container {wanted} is not valid for pod {pod_name}")
    return wanted


def log_file(cluster: LocalCluster, req: Request, logs_dir: Path) -> Path:
    """The file a log request reads, or the error Kubernetes gives when there is none."""
    pod = get(cluster, req)
    container = _container(pod, req)
    namespace = str(pod["metadata"].get("namespace", "default"))
    path = container_log_path(logs_dir, namespace, req.path.name, container)
    if _flag(req, "previous"):
        previous = path.with_name(f"{container}.previous.log")
        if not previous.is_file():
            raise ApiError(400, "BadRequest", f'previous terminated container "{container}" '
                                              f'in pod "{req.path.name}" not found')
        return previous
    if not path.is_file():
        raise ApiError(400, "BadRequest", f'container "{container}" in pod "{req.path.name}" '
                                          "is waiting to start")
    return path


def read_log(path: Path, req: Request) -> bytes:
    data = path.read_bytes()
    tail = req.query.get("tailLines", "")
    if tail.isdigit():
        lines = data.splitlines(keepends=True)
        data = b"".join(lines[-int(tail):]) if int(tail) else b""
    limit = req.query.get("limitBytes", "")
    if limit.isdigit():
        data = data[:int(limit)]
    return data


def follow_log(
    cluster: LocalCluster, req: Request, path: Path, *, stop: threading.Event
) -> Iterator[bytes | None]:
    """What `read_log` gives, then each new piece of output; `None` when there is none yet
    (the caller pauses). Ends when the Pod is gone or the file is replaced (a restart)."""
    data = read_log(path, req)
    yield data
    with open(path, "rb") as log:
        log.seek(0, os.SEEK_END)
        inode = os.fstat(log.fileno()).st_ino
        while not stop.is_set():
            chunk = log.read(_CHUNK)
            if chunk:
                yield chunk
                continue
            if not _same_file(path, inode) or not _pod_exists(cluster, req):
                return
            yield None


def _same_file(path: Path, inode: int) -> bool:
    try:
        return path.stat().st_ino == inode
    except OSError:
        return False


def _pod_exists(cluster: LocalCluster, req: Request) -> bool:
    try:
        get(cluster, req)
    except NotFound:
        return False
    return True
