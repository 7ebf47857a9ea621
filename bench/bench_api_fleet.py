"""The Application loop through the Kubernetes API vs on the embedded store, in one run.

A fleet of N Applications (bench_scale.py's: 20 resources each, already in sync) is seeded
once into a store file, copied, and reconciled twice from the same start:

  embedded     the controllers on the store itself (`headway serve`)
  API          the controllers on the Kubernetes backend (lightkube's HTTP client) talking
               to the local runtime's API over the other copy (`headway serve --kubeconfig`)

and reports the first pass (every app refreshed once) for each, with the ratio. Then, on the
API side, what the long-lived watch streams change:

  poll         one pass of the controller manager's watches (every kind it watches, after
               a write elsewhere moved the store's version): with one stream per kind vs a
               stream opened per poll (the backend before the streams)
  watch delay  from a write's return (another client) to its event in a poll of the backend:
               with the streams vs without

    .venv/bin/python bench/bench_api_fleet.py [--apps 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Event
from pathlib import Path

import httpx2
import pygit2

from bench_scale import APPS_NS, app_name, commit, manifest, seed
from headway.clock import SystemClock
from headway.cluster.kube import KubeCluster
from headway.cluster.kube.transport import Transport
from headway.cluster.local import LocalCluster
from headway.cluster.local.api.kubeapi.server import ApiServer
from headway.cluster.protocol import Cluster
from headway.controllers.app.controller import APP_API_VERSION, ApplicationController
from headway.controllers.app.sources import SourceReader
from headway.controllers.app.steps import ApplicationSteps, SourceWatchSteps
from headway.controllers.cluster_registry import ClusterRegistry
from headway.controllers.manager import Manager
from headway.source.git import GitCache

POLLS = 20
WRITES = 30


class Counting(ApplicationController):
    reconciles = 0

    def reconcile(self, name: str, namespace: str) -> float | None:
        self.reconciles += 1
        return super().reconcile(name, namespace)


def fleet_manager(cluster: Cluster, cache: Path) -> tuple[Manager, Counting]:
    clock = SystemClock()
    reader = SourceReader(git=GitCache(cache), clock=clock)
    controller = Counting(store=cluster, clusters=ClusterRegistry(cluster), sources=reader,
                          clock=clock)
    manager = Manager(cluster, clock, resync_seconds=3600.0)
    manager.register(ApplicationSteps(controller, cluster, apps_namespace=APPS_NS))
    sources = SourceWatchSteps(controller, reader, cluster)
    sources.watches = (("v1", "Namespace"), (APP_API_VERSION, "Application"))
    manager.register(sources)
    return manager, controller


async def first_pass(cluster: Cluster, cache: Path, apps: int) -> float:
    manager, controller = fleet_manager(cluster, cache)
    started = time.perf_counter()
    while controller.reconciles < apps:
        await manager.run_once()
    return time.perf_counter() - started


def serve_api(db: Path, address: Queue[str], stop: Event) -> None:
    """The local runtime's API over `db`, in a process of its own (as `headway runtime up`
    runs it): in the bench's own process its threads would take the controllers' GIL."""
    server = ApiServer(db_path=db, clock=SystemClock())
    server.start()
    address.put(server.address)
    stop.wait()
    server.stop()


@contextmanager
def api_over(db: Path, *, streams: bool = True) -> Iterator[KubeCluster]:
    context = multiprocessing.get_context("spawn")
    address: Queue[str] = context.Queue()
    stop = context.Event()
    process = context.Process(target=serve_api, args=(db, address, stop))
    process.start()
    client = httpx2.Client(base_url=f"http://{address.get(timeout=60)}", timeout=60.0)
    try:
        with KubeCluster(Transport(client), streams=streams) as cluster:
            yield cluster
    finally:
        stop.set()
        process.join(timeout=30)


def poll_seconds(cluster: KubeCluster, db: Path, cache: Path) -> list[float]:
    """Seconds of each manager poll, a ConfigMap written (by another client) before each."""
    manager, _ = fleet_manager(cluster, cache)
    manager.poll()  # the initial lists
    manager.poll()  # the streams open
    times = []
    with LocalCluster(db, SystemClock()) as other:
        for n in range(POLLS):
            other.apply({"apiVersion": "v1", "kind": "ConfigMap",
                         "metadata": {"name": f"poke-{n}", "namespace": "default"}},
                        field_manager="bench")
            started = time.perf_counter()
            manager.poll()
            times.append(time.perf_counter() - started)
    return times


def watch_delays(cluster: KubeCluster, db: Path) -> list[float]:
    """Milliseconds from another client's write to its event in a poll of the backend."""
    with LocalCluster(db, SystemClock()) as other:
        other.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "bench"}},
                    field_manager="bench")
        version = other.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
            "name": "start", "namespace": "bench"}}, field_manager="bench")["metadata"][
            "resourceVersion"]
        list(cluster.watch("v1", "ConfigMap", namespace="bench", resource_version=version))
        delays = []
        for n in range(WRITES):
            written = other.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
                "name": f"w{n}", "namespace": "bench"}}, field_manager="bench")
            started = time.perf_counter()
            while not list(cluster.watch("v1", "ConfigMap", namespace="bench",
                                         resource_version=version)):
                time.sleep(0.001)
            delays.append((time.perf_counter() - started) * 1000)
            version = written["metadata"]["resourceVersion"]
    return delays


def seeded(root: Path, apps: int) -> Path:
    repo = pygit2.init_repository(str(root / "remote.git"), bare=True, initial_head="main")
    url = (root / "remote.git").as_uri()
    commit(repo, {f"apps/{app_name(i)}/all.yaml": manifest(i) for i in range(apps)}, "fleet")
    db = root / "seed.db"
    with LocalCluster(db, SystemClock()) as store:
        seed(store, url, apps)
    return db


def copy_of(db: Path, name: str) -> Path:
    target = db.with_name(name)
    shutil.copyfile(db, target)
    return target


def _ms(values: list[float]) -> str:
    ordered = sorted(values)
    return f"{statistics.median(ordered):7.1f} / {ordered[int(len(ordered) * 0.95) - 1]:.1f}"


async def run(apps: int, root: Path) -> None:
    started = time.perf_counter()
    db = seeded(root, apps)
    print(f"{apps} apps x 20 resources seeded in {time.perf_counter() - started:.1f} s (untimed)")
    with LocalCluster(copy_of(db, "embedded.db"), SystemClock()) as store:
        embedded = await first_pass(store, root / "cache-embedded", apps)
    print(f"first pass, embedded store   {embedded:8.1f} s  {embedded / apps * 1e3:7.2f} ms/app")
    api_db = copy_of(db, "api.db")
    with api_over(api_db) as cluster:
        through_api = await first_pass(cluster, root / "cache-api", apps)
    print(f"first pass, through the API  {through_api:8.1f} s  "
          f"{through_api / apps * 1e3:7.2f} ms/app   x{through_api / embedded:.1f}")
    print(f"manager poll after a write elsewhere (ms, median / p95 of {POLLS})")
    for label, streams in (("one stream per kind", True), ("a stream per poll", False)):
        target = copy_of(db, f"poll-{streams}.db")
        with api_over(target, streams=streams) as cluster:
            times = [t * 1000 for t in poll_seconds(cluster, target, root / f"cache-{streams}")]
        print(f"  {label:<26}{_ms(times)}")
    print(f"watch delay, another client's write -> a poll sees it (ms, median / p95 of {WRITES})")
    for label, streams in (("one stream per kind", True), ("a stream per poll", False)):
        target = copy_of(db, f"watch-{streams}.db")
        with api_over(target, streams=streams) as cluster:
            print(f"  {label:<26}{_ms(watch_delays(cluster, target))}")


def main() -> None:
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(line_buffering=True)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--apps", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(run(args.apps, Path(tmp)))


if __name__ == "__main__":
    main()
