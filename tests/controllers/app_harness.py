"""A real Git remote (bare repository, file://), the SQLite store and an Application
controller over them, with helpers to play the workload controllers by hand."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pygit2
import yaml

from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
from headway.controllers.app.controller import APP_API_VERSION, ApplicationController
from headway.controllers.app.sources import SourceReader
from headway.controllers.cluster_registry import ClusterRegistry
from headway.source.git import GitCache

APPS_NS = "argocd"


class Remote:
    """A bare repository standing in for the Git server."""

    def __init__(self, path: Path) -> None:
        self.repo = pygit2.init_repository(str(path), bare=True, initial_head="main")
        self.url = path.as_uri()

    def commit(self, files: Mapping[str, str | None], message: str = "change") -> str:
        ref = "refs/heads/main"
        parents = [self.repo.references[ref].target] if ref in self.repo.references else []
        index = pygit2.Index()
        if parents:
            index.read_tree(self.repo[parents[0]].peel(pygit2.Commit).tree)
        for path, content in files.items():
            if content is None:
                index.remove(path)
            else:
                blob = self.repo.create_blob(content.encode())
                index.add(pygit2.IndexEntry(path, blob, pygit2.enums.FileMode.BLOB))
        tree = index.write_tree(self.repo)
        sig = pygit2.Signature("Dev", "dev@example.com")
        return str(self.repo.create_commit(ref, sig, sig, message, tree, parents))


def manifests(*objects: Mapping[str, Any]) -> str:
    return yaml.safe_dump_all([dict(o) for o in objects], sort_keys=False)


def config_map(name: str, *, wave: int | None = None, **annotations: str) -> dict[str, Any]:
    notes = dict(annotations)
    if wave is not None:
        notes["argocd.argoproj.io/sync-wave"] = str(wave)
    meta: dict[str, Any] = {"name": name}
    if notes:
        meta["annotations"] = notes
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"k": name}}


def deployment(name: str, *, wave: int = 0, image: str = "web:1") -> dict[str, Any]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "annotations": {"argocd.argoproj.io/sync-wave": str(wave)}},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "main", "image": image}]},
            },
        },
    }


def hook_job(name: str, phase: str, *, policy: str | None = None) -> dict[str, Any]:
    notes = {"argocd.argoproj.io/hook": phase}
    if policy is not None:
        notes["argocd.argoproj.io/hook-delete-policy"] = policy
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "annotations": notes},
        "spec": {
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "main", "image": "tool:1", "command": ["true"]}],
                }
            }
        },
    }


def application(
    name: str,
    url: str,
    *,
    path: str,
    namespace: str = "demo",
    automated: Mapping[str, Any] | None = None,
    options: tuple[str, ...] = (),
    retry: Mapping[str, Any] | None = None,
    project: str = "default",
) -> dict[str, Any]:
    policy: dict[str, Any] = {"syncOptions": list(options)}
    if automated is not None:
        policy["automated"] = dict(automated)
    if retry is not None:
        policy["retry"] = dict(retry)
    return {
        "apiVersion": APP_API_VERSION,
        "kind": "Application",
        "metadata": {"name": name, "namespace": APPS_NS},
        "spec": {
            "project": project,
            "source": {"repoURL": url, "path": path, "targetRevision": "main"},
            "destination": {"server": "https://kubernetes.default.svc", "namespace": namespace},
            "syncPolicy": policy,
        },
    }


@dataclass
class Harness:
    store: LocalCluster
    clock: VirtualClock
    remote: Remote
    controller: ApplicationController
    reader: SourceReader
    cache_dir: Path

    def install(self, app: Mapping[str, Any]) -> None:
        self.store.apply(dict(app), field_manager="test")

    def app(self, name: str) -> dict[str, Any]:
        return self.store.get(APP_API_VERSION, "Application", name, APPS_NS)

    def status(self, name: str) -> dict[str, Any]:
        return dict(self.app(name).get("status") or {})

    def operation(self, name: str) -> dict[str, Any]:
        return dict(self.status(name).get("operationState") or {})

    def step(self, name: str) -> float | None:
        return self.controller.reconcile(name, APPS_NS)

    def run(
        self, name: str, until: Callable[[dict[str, Any]], bool], *, steps: int = 30
    ) -> dict[str, Any]:
        """Reconcile until `until(status)` holds; fails after `steps` steps."""
        for _ in range(steps):
            self.step(name)
            status = self.status(name)
            if until(status):
                return status
        raise AssertionError(f"not reached after {steps} steps: {self.status(name)}")

    def restart_controller(self) -> None:
        """A new controller (and caches) over the same store: what a restart leaves."""
        self.reader = SourceReader(git=GitCache(self.cache_dir), clock=self.clock)
        self.controller = ApplicationController(
            store=self.store,
            clusters=ClusterRegistry(self.store),
            sources=self.reader,
            clock=self.clock,
        )

    def get(self, kind: str, name: str, namespace: str | None = "demo") -> dict[str, Any]:
        api = {"Deployment": "apps/v1", "Job": "batch/v1", "Application": APP_API_VERSION}.get(
            kind, "v1"
        )
        if kind == "HorizontalPodAutoscaler":
            api = "autoscaling/v2"
        return self.store.get(api, kind, name, namespace)

    def exists(self, kind: str, name: str, namespace: str | None = "demo") -> bool:
        try:
            self.get(kind, name, namespace)
        except Exception:
            return False
        return True

    def make_ready(self, name: str, namespace: str = "demo") -> None:
        """Play the Deployment controller: every replica updated and available."""
        d = self.get("Deployment", name, namespace)
        replicas = int(d["spec"].get("replicas", 1))
        self.store.patch_status(
            "apps/v1",
            "Deployment",
            name,
            namespace,
            {
                "observedGeneration": d["metadata"]["generation"],
                "replicas": replicas,
                "updatedReplicas": replicas,
                "readyReplicas": replicas,
                "availableReplicas": replicas,
            },
        )

    def finish_job(self, name: str, *, ok: bool = True, namespace: str = "demo") -> None:
        """Play the Job controller: Complete or Failed."""
        kind = "Complete" if ok else "Failed"
        condition = {
            "type": kind,
            "status": "True",
            "reason": "Done" if ok else "BackoffLimitExceeded",
        }
        status = {"succeeded": 1} if ok else {"failed": 1}
        self.store.patch_status(
            "batch/v1", "Job", name, namespace, {**status, "conditions": [condition]}
        )


# Headway invents no `default` project; tests about other things install this one, which
# allows everything (as Argo CD's API server creates it).
PERMISSIVE_DEFAULT_PROJECT: Mapping[str, Any] = {
    "apiVersion": APP_API_VERSION,
    "kind": "AppProject",
    "metadata": {"name": "default", "namespace": APPS_NS},
    "spec": {
        "sourceRepos": ["*"],
        "destinations": [{"server": "*", "name": "*", "namespace": "*"}],
        "clusterResourceWhitelist": [{"group": "*", "kind": "*"}],
    },
}


def make_harness(tmp_path: Path, clock: VirtualClock, files: Mapping[str, str]) -> Harness:
    remote = Remote(tmp_path / "remote.git")
    remote.commit(files, "initial")
    (tmp_path / "state").mkdir()
    store = LocalCluster(tmp_path / "state" / "cluster.db", clock)  # `--state-dir tmp/state`
    for namespace in (APPS_NS, "demo"):
        store.apply(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
            field_manager="test",
        )
    # Applied as "admin", the manager tests use to replace it with a project of their own.
    store.apply(dict(PERMISSIVE_DEFAULT_PROJECT), field_manager="admin")
    cache_dir = tmp_path / "git-cache"
    reader = SourceReader(git=GitCache(cache_dir), clock=clock)
    controller = ApplicationController(
        store=store, clusters=ClusterRegistry(store), sources=reader, clock=clock
    )
    return Harness(store, clock, remote, controller, reader, cache_dir)


def message(status: Mapping[str, Any]) -> str:
    return str((status.get("operationState") or {}).get("message") or "")


def phase(status: Mapping[str, Any]) -> str:
    return str((status.get("operationState") or {}).get("phase") or "")


def apply_argocd_cm(h: Harness, data: dict[str, str]) -> None:
    """Write the installation's `argocd-cm` ConfigMap (as an administrator would)."""
    h.store.apply(
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": {"name": "argocd-cm", "namespace": APPS_NS}, "data": data},
        field_manager="admin",
    )  # fmt: skip


def request_sync(h: Harness, name: str, **sync: Any) -> None:
    """What `headway app sync` writes: an `operation` on the Application."""
    operation = {"sync": dict(sync), "initiatedBy": {"username": "tester"}}
    h.store.apply(
        {
            "apiVersion": APP_API_VERSION,
            "kind": "Application",
            "metadata": {"name": name, "namespace": APPS_NS},
            "operation": operation,
        },
        field_manager="cli",
    )


class CountingLists:
    """The store, counting `list` calls (everything else passes through)."""

    def __init__(self, store: LocalCluster) -> None:
        self.store = store
        self.lists = 0

    def list(self, *args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        self.lists += 1
        return self.store.list(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)


def app_with_presync_and_syncfail_hooks(tmp_path: Path, clock: VirtualClock) -> Harness:
    """The automated Application `shop`: a PreSync Job `migrate` (deleted when it fails), a
    SyncFail Job `notify` and a ConfigMap `settings`."""
    files = {
        "app/all.yaml": manifests(
            hook_job("migrate", "PreSync", policy="HookFailed"),
            hook_job("notify", "SyncFail"),
            config_map("settings"),
        )
    }
    h = make_harness(tmp_path, clock, files)
    h.install(application("shop", h.remote.url, path="app", automated={}))
    return h
