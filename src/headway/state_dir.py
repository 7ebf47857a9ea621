"""Where a Headway state directory (default `.headway/`) keeps its files.

Shared by the local runtime that writes them, the engine that reads the runtime's metrics
address, and the CLI; it knows paths and the `runtime.json` format, nothing else.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

__all__ = ["RUNTIME_LOCK", "RuntimePaths", "container_log_path", "read_runtime_info"]

RUNTIME_LOCK = "runtime.lock"


@dataclass(frozen=True)
class RuntimePaths:
    state_dir: Path

    @property
    def db(self) -> Path:
        return self.state_dir / "cluster.db"

    @property
    def pidfile(self) -> Path:
        return self.state_dir / "runtime.pid"

    @property
    def lock(self) -> Path:
        """Held (`flock`) by the running runtime; see `headway.state_lock`."""
        return self.state_dir / RUNTIME_LOCK

    @property
    def info(self) -> Path:
        return self.state_dir / "runtime.json"

    @property
    def log(self) -> Path:
        return self.state_dir / "runtime.log"

    @property
    def logs_dir(self) -> Path:
        return self.state_dir / "logs"

    @property
    def volumes_dir(self) -> Path:
        """Each PersistentVolumeClaim's data, `pvc-<claim uid>/` (kept across Pods)."""
        return self.state_dir / "volumes"


def container_log_path(logs_dir: Path, namespace: str, pod: str, container: str) -> Path:
    """Where the kubelet appends a container's output and the `pods/log` API reads it."""
    return logs_dir / namespace / pod / f"{container}.log"


def read_runtime_info(paths: RuntimePaths) -> dict[str, object]:
    try:
        data = json.loads(paths.info.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
