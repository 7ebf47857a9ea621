"""Shared pieces of the end-to-end sync tests: a real Git remote and manifests of real
processes for the local runtime."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pygit2
import yaml

APP_SERVER = Path(__file__).resolve().parents[2] / "examples" / "app" / "server.py"
API = "argoproj.io/v1alpha1"


class Remote:
    def __init__(self, path: Path) -> None:
        self.repo = pygit2.init_repository(str(path), bare=True, initial_head="main")
        self.url = path.as_uri()

    def commit(self, files: Mapping[str, str], message: str = "change") -> str:
        ref = "refs/heads/main"
        parents = [self.repo.references[ref].target] if ref in self.repo.references else []
        index = pygit2.Index()
        if parents:
            index.read_tree(self.repo[parents[0]].peel(pygit2.Commit).tree)
        for name, content in files.items():
            blob = self.repo.create_blob(content.encode())
            index.add(pygit2.IndexEntry(name, blob, pygit2.enums.FileMode.BLOB))
        sig = pygit2.Signature("Dev", "dev@example.com")
        tree = index.write_tree(self.repo)
        return str(self.repo.create_commit(ref, sig, sig, message, tree, parents))


def dump(*objects: Mapping[str, Any]) -> str:
    return yaml.safe_dump_all([dict(o) for o in objects], sort_keys=False)


def python_job(name: str, code: str, annotations: Mapping[str, str]) -> dict[str, Any]:
    container = {"name": "main", "image": "python", "command": [sys.executable, "-c", code]}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "annotations": dict(annotations)},
        "spec": {
            "backoffLimit": 0,
            "template": {"spec": {"restartPolicy": "Never", "containers": [container]}},
        },
    }


def web_deployment(name: str, *, ready_path: str, wave: int = 0) -> dict[str, Any]:
    container = {
        "name": "web",
        "image": "python",
        "command": [sys.executable, str(APP_SERVER)],
        "readinessProbe": {"httpGet": {"path": ready_path, "port": 8080}, "periodSeconds": 1},
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "annotations": {"argocd.argoproj.io/sync-wave": str(wave)}},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"terminationGracePeriodSeconds": 1, "containers": [container]},
            },
        },
    }


def application(name: str, url: str, **policy: Any) -> dict[str, Any]:
    return {
        "apiVersion": API,
        "kind": "Application",
        "metadata": {"name": name, "namespace": "argocd"},
        "spec": {
            "project": "default",
            "source": {"repoURL": url, "path": "app", "targetRevision": "main"},
            "destination": {"server": "https://kubernetes.default.svc", "namespace": "default"},
            "syncPolicy": dict(policy),
        },
    }


def default_project() -> dict[str, Any]:
    """A `default` AppProject that allows everything (Headway invents none)."""
    return {
        "apiVersion": API,
        "kind": "AppProject",
        "metadata": {"name": "default", "namespace": "argocd"},
        "spec": {
            "sourceRepos": ["*"],
            "destinations": [{"server": "*", "namespace": "*"}],
            "clusterResourceWhitelist": [{"group": "*", "kind": "*"}],
        },
    }


def stop_gently(process: subprocess.Popen[bytes], *, grace_seconds: float = 15.0) -> None:
    """SIGTERM a process still running, and SIGKILL it when it outlives `grace_seconds`."""
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=grace_seconds)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)
