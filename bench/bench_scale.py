"""A fleet on one machine: N Applications of 20 resources each on the local store.

One Git repository (a real bare repository, `file://`) holds `apps/app-NNNNN/all.yaml` for
every app (10 ConfigMaps, 5 Secrets, 5 Services); the SQLite store holds the Applications and,
already in sync, their live objects. The Application loop runs as `headway serve` runs it
(the controller manager with `ApplicationSteps` and `SourceWatchSteps`), and the bench reports:

  seeding        untimed, but printed: the repository is one commit built from one index
                 (pygit2), and the store is loaded in bulk (`LocalCluster.create_all`, one
                 transaction per 100 apps) already in sync, because the first sync is not
                 what is measured; the first *refresh* is
  first pass     every app refreshed once after start (render, compare, status write)
  memory         the process's resident set after the first pass, after the steady window,
                 and its peak
  steady CPU     CPU seconds per wall second while nothing changes (watches, the source
                 watcher's 0.5 s step, the 30 s resync, and the look at each app every
                 poll interval, 180 s, which a first pass longer than that brings into the
                 window), and the app reconciles it cost
  commit -> app  wall time from a commit touching one app until the reconcile writing its
                 status (new revision, OutOfSync) returned: the median of `--commits`
                 commits, the first to the last app in name order
  commit -> all  until every app of the repository was reconciled since the commit (the
                 source watcher queues them for the Application loop, 100 per pass), and
                 how many app reconciles one commit cost
  store on disk  the SQLite file and its write-ahead log
  collector      the garbage collector policy's freezes and re-freezes, and the resident
                 set after each commit: freezing must not leak, so it stays flat

The yardstick is one app's reconcile in the first pass of the same run: the commit -> app
figure is printed in first-pass apps' worth, which should stay flat as the fleet grows.

The garbage collector runs as in `headway serve`: the same `CollectorPolicy` with its
`started()` before the first pass and `after_pass(manager.pass_summary(steps))` after every
pass - inside `Manager.run` for the steady window, by `one_pass` where the bench drives the
passes itself. `--no-tune-gc` runs as `headway serve --no-tune-gc` (CPython's defaults).

    .venv/bin/python bench/bench_scale.py [--apps 10000] [--steady-seconds 60] [--commits 5]
        [--no-tune-gc]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pygit2
import yaml

from headway.clock import SystemClock
from headway.cluster.local import LocalCluster
from headway.controllers.app.controller import APP_API_VERSION, ApplicationController
from headway.controllers.app.sources import SourceReader
from headway.controllers.app.steps import ApplicationSteps, SourceWatchSteps
from headway.controllers.cluster_registry import ClusterRegistry
from headway.controllers.collector_policy import CollectorPolicy, PythonCollector
from headway.controllers.manager import Manager
from headway.source.git import GitCache
from headway.sync.comparison import prepare_desired

APPS_NS = "argocd"
SEED_BATCH = 100  # apps per store transaction while seeding (2,100 objects)
FLEET_NS = "fleet"
PROJECT = {
    "apiVersion": APP_API_VERSION,
    "kind": "AppProject",
    "metadata": {"name": "default", "namespace": APPS_NS},
    "spec": {
        "sourceRepos": ["*"],
        "destinations": [{"server": "*", "namespace": "*"}],
    },
}


def app_name(i: int) -> str:
    return f"app-{i:05d}"


def app_objects(i: int, flag: str = "on") -> list[dict[str, Any]]:
    name = app_name(i)
    objects: list[dict[str, Any]] = []
    for j in range(10):
        data = {"LOG_LEVEL": "info", "OWNER": f"team-{i % 50}", "FLAG": flag, "INDEX": str(j)}
        objects.append(
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{name}-cm-{j}"}}
            | {"data": data}
        )
    for j in range(5):
        objects.append(
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": f"{name}-secret-{j}"},
                "type": "Opaque",
                "data": {"password": "czNjcmV0"},
            }
        )
    for j in range(5):
        # Two equal dicts, not one shared: a shared one would be written as a YAML anchor.
        objects.append(
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": f"{name}-svc-{j}", "labels": {"app": f"{name}-{j}"}},
                "spec": {
                    "type": "ClusterIP",
                    "selector": {"app": f"{name}-{j}"},
                    "ports": [{"name": "http", "port": 80, "targetPort": 8080}],
                },
            }
        )
    return objects


def application(i: int, url: str) -> dict[str, Any]:
    return {
        "apiVersion": APP_API_VERSION,
        "kind": "Application",
        "metadata": {"name": app_name(i), "namespace": APPS_NS},
        "spec": {
            "project": "default",
            "source": {"repoURL": url, "path": f"apps/{app_name(i)}", "targetRevision": "main"},
            "destination": {"server": "https://kubernetes.default.svc", "namespace": FLEET_NS},
        },
    }


def commit(repo: pygit2.Repository, apps: dict[int, str], message: str) -> str:
    """Commit `all.yaml` of each app in `apps` (index -> text) onto `main`: trees built
    directly (one `apps/` tree, the others kept from the parent), where adding each file to
    an index cost more than linear time (3,000 apps: 53 s)."""
    ref = "refs/heads/main"
    parents = [repo.references[ref].target] if ref in repo.references else []
    root = repo[parents[0]].peel(pygit2.Commit).tree if parents else None
    listing = repo.TreeBuilder(repo[root["apps"].id]) if root is not None else repo.TreeBuilder()
    for i, text in apps.items():
        app_dir = repo.TreeBuilder()
        app_dir.insert("all.yaml", repo.create_blob(text.encode()), pygit2.enums.FileMode.BLOB)
        listing.insert(app_name(i), app_dir.write(), pygit2.enums.FileMode.TREE)
    top = repo.TreeBuilder()
    top.insert("apps", listing.write(), pygit2.enums.FileMode.TREE)
    sig = pygit2.Signature("bench", "bench@example.com")
    return str(repo.create_commit(ref, sig, sig, message, top.write(), parents))


def manifest(i: int, flag: str = "on") -> str:
    return yaml.dump_all(app_objects(i, flag), Dumper=yaml.CSafeDumper, sort_keys=False)


def seed(store: LocalCluster, url: str, apps: int) -> None:
    """Namespaces, the project, every Application and its live objects, already in sync."""
    for namespace in (APPS_NS, FLEET_NS):
        store.apply(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
            field_manager="bench",
        )
    store.apply(dict(PROJECT), field_manager="bench")
    for start in range(0, apps, SEED_BATCH):
        store.create_all(
            (obj for i in range(start, min(start + SEED_BATCH, apps)) for obj in app_seed(i, url)),
            field_manager="bench",
        )


def app_seed(i: int, url: str) -> list[dict[str, Any]]:
    """App `i` and its live objects, as its first sync would have left them."""
    live = prepare_desired(app_objects(i), app=app_name(i), namespace=FLEET_NS)
    return [application(i, url), *live]


class CountingController(ApplicationController):
    """The Application controller, counting its reconciles (what one change costs)."""

    reconciles = 0

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.finished: dict[str, float] = {}  # when each app's last reconcile returned
        self.since_commit: set[str] = set()  # the apps reconciled since the last commit

    def reconcile(self, name: str, namespace: str) -> float | None:
        self.reconciles += 1
        try:
            return super().reconcile(name, namespace)
        finally:
            self.finished[name] = time.perf_counter()
            self.since_commit.add(name)


class TimedCollector(PythonCollector):
    """The process's collector, as the policy drives it, with the CPU seconds of what the
    policy asked of it (its freezes' collections, its looks at the heap)."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def collect(self) -> None:
        started = time.process_time()
        super().collect()
        self.seconds += time.process_time() - started

    def survivors(self) -> int:
        started = time.process_time()
        try:
            return super().survivors()
        finally:
            self.seconds += time.process_time() - started


def rss_mb() -> tuple[float, float]:
    """(current, peak) resident set of this process, in MB."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    current = pages * resource.getpagesize() / 1e6
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e6  # kB of 1,024
    return current, peak


async def one_pass(manager: Manager, collector: CollectorPolicy | None) -> int:
    """One pass of the serve loop (`Manager.run`'s body, without its sleep): the steps it
    took."""
    steps = await manager.run_once()
    if collector is not None:
        collector.after_pass(manager.pass_summary(steps))
    return steps


async def drain(
    manager: Manager, controller: CountingController, apps: int, collector: CollectorPolicy | None
) -> int:
    """Step until every app was reconciled once; returns the steps taken. (Not "until nothing
    is due": a pass longer than the 30 s resync queues every app again, without end.)"""
    steps = 0
    while controller.reconciles < apps:
        steps += await one_pass(manager, collector)
    return steps


async def steady(
    manager: Manager, seconds: float, collector: CollectorPolicy | None
) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of the manager's own loop while nothing changes."""
    stop = asyncio.Event()
    cpu, wall = time.process_time(), time.perf_counter()
    task = asyncio.create_task(manager.run(stop, poll_seconds=0.1, collector=collector))
    await asyncio.sleep(seconds)
    stop.set()
    await task
    return time.process_time() - cpu, time.perf_counter() - wall


async def commit_to_app(
    manager: Manager,
    controller: CountingController,
    *,
    store: LocalCluster,
    repo: pygit2.Repository,
    changed: int,
    flag: str,
    apps: int,
    collector: CollectorPolicy | None,
) -> tuple[float, float, float]:
    """Commit a change to one app; wall seconds until the reconcile that wrote its status
    with the new revision returned, and until every app of the repository had been
    reconciled since the commit (the source watcher queues those for the Application loop,
    which takes them a bounded number per pass), and the CPU seconds until then."""
    sha = commit(repo, {changed: manifest(changed, flag)}, "flip")
    controller.since_commit = set()
    started, cpu = time.perf_counter(), time.process_time()
    while True:
        steps = await one_pass(manager, collector)
        app = store.get(APP_API_VERSION, "Application", app_name(changed), APPS_NS)
        sync = (app.get("status") or {}).get("sync") or {}
        if sync.get("revision") == sha and sync.get("status") == "OutOfSync":
            break
        if not steps:
            with contextlib.suppress(TimeoutError):
                await asyncio.sleep(0.05)
    written = controller.finished[app_name(changed)] - started
    while len(controller.since_commit) < apps:
        if not await one_pass(manager, collector):
            await asyncio.sleep(0.05)
    return written, time.perf_counter() - started, time.process_time() - cpu


async def run(
    apps: int, steady_seconds: float, commits: int, root: Path, *, tune_gc: bool
) -> None:
    store, repo = seeded(apps, root)
    timed = TimedCollector()
    collector = CollectorPolicy(timed) if tune_gc else None
    clock = store.clock
    reader = SourceReader(git=GitCache(root / "git-cache"), clock=clock)
    controller = CountingController(
        store=store, clusters=ClusterRegistry(store), sources=reader, clock=clock
    )
    manager = Manager(store, clock, resync_seconds=30.0)
    manager.register(ApplicationSteps(controller, store, apps_namespace=APPS_NS))
    sources = SourceWatchSteps(controller, reader, store)
    sources.watches = (("v1", "Namespace"), (APP_API_VERSION, "Application"))
    manager.register(sources)

    wall, cpu = time.perf_counter(), time.process_time()
    if collector is not None:
        collector.started()  # as `Manager.run` does before its first pass
    steps = await drain(manager, controller, apps, collector)
    per_app = (time.perf_counter() - wall) / apps
    cpu_per_app = (time.process_time() - cpu) / apps  # what a loaded machine does not skew
    synced = sum(
        ((a.get("status") or {}).get("sync") or {}).get("status") == "Synced"
        for a in store.list(APP_API_VERSION, "Application")
    )
    print(f"first pass         {per_app * apps:8.1f} s   {per_app * 1e3:6.2f} ms/app   "
          f"(CPU {cpu_per_app * 1e3:.2f} ms/app; {steps} steps)")
    print(f"  apps Synced      {synced} of {apps}")
    current, peak = rss_mb()
    print(f"memory             {current:8.0f} MB resident ({peak:.0f} MB peak)")

    before = controller.reconciles
    policy_cpu = timed.seconds
    cpu, wall_s = await steady(manager, steady_seconds, collector)
    policy_cpu = timed.seconds - policy_cpu
    current, peak = rss_mb()
    print(
        f"steady CPU         {cpu / wall_s:8.3f} CPU s per s over {wall_s:.0f} s "
        f"({controller.reconciles - before} app reconciles; {current:.0f} MB resident after)"
    )
    if collector is not None:  # the first full pass ends when nothing is due: often in here
        print(f"  without the policy's collections {(cpu - policy_cpu) / wall_s:.3f} CPU s per s"
              f" ({policy_cpu:.2f} s of them, {collector.freezes} freezes so far)")
    await commit_latencies(manager, controller, store=store, repo=repo, apps=apps,
                           commits=commits, per_app=per_app, collector=collector)
    print(f"store on disk      {store_mb(root / 'cluster.db'):8.0f} MB "
          f"({store_mb(root / 'cluster.db') * 1e3 / apps:.0f} kB/app)")
    _, peak = rss_mb()
    print(f"peak memory        {peak:8.0f} MB")
    if collector is None:
        print("collector          CPython's defaults (--no-tune-gc)")
    else:
        print(f"collector          policy: {collector.freezes} freezes, {collector.refreezes} of"
              f" them re-freezes; {timed.seconds:.2f} s CPU in its collections and looks")


def seeded(apps: int, root: Path) -> tuple[LocalCluster, pygit2.Repository]:
    """The repository (one commit) and the store (every app already in sync), timed."""
    repo = pygit2.init_repository(str(root / "remote.git"), bare=True, initial_head="main")
    url = (root / "remote.git").as_uri()
    started = time.perf_counter()
    commit(repo, {i: manifest(i) for i in range(apps)}, "fleet")
    written = time.perf_counter()
    store = LocalCluster(root / "cluster.db", SystemClock())
    seed(store, url, apps)
    print(f"{apps} apps x 20 resources seeded in {time.perf_counter() - started:.1f} s "
          f"(Git {written - started:.1f} s, store {time.perf_counter() - written:.1f} s; "
          "untimed)")
    return store, repo


async def commit_latencies(
    manager: Manager,
    controller: CountingController,
    *,
    store: LocalCluster,
    repo: pygit2.Repository,
    apps: int,
    commits: int,
    per_app: float,
    collector: CollectorPolicy | None,
) -> None:
    """`commits` commits, each to one app (the last in name order first, the one that waited
    longest when apps went in name order, then others spread over the fleet)."""
    changed_app, all_done, costs = [], [], []
    for n in range(commits):
        changed = (apps - 1 - n * apps // max(commits, 1)) % apps
        before = controller.reconciles
        latency, whole, whole_cpu = await commit_to_app(
            manager, controller, store=store, repo=repo, changed=changed, flag=f"off-{n}",
            apps=apps, collector=collector,
        )
        changed_app.append(latency)
        all_done.append(whole)
        costs.append(controller.reconciles - before)
        print(f"  commit {n + 1:<3}     {latency:8.2f} s to app-{changed:05d}, all done in "
              f"{whole:.2f} s, CPU {whole_cpu:.2f} s ({costs[-1]} app reconciles; "
              f"{rss_mb()[0]:.0f} MB resident)")  # a run cut short still shows it
    latency = statistics.median(changed_app)
    print(
        f"commit -> app      {latency:8.2f} s median of {commits} "
        f"({min(changed_app):.2f}-{max(changed_app):.2f}; "
        f"= {latency / per_app:.0f} first-pass apps' worth)"
    )
    print(
        f"commit -> all      {statistics.median(all_done):8.2f} s median "
        f"({statistics.median(costs):.0f} app reconciles per commit: every app of the "
        "repository records the new revision, queued for the Application loop)"
    )


def store_mb(path: Path) -> float:
    """The store's file with its write-ahead log, in MB."""
    files = [path, path.with_name(path.name + "-wal")]
    return sum(f.stat().st_size for f in files if f.exists()) / 1e6


def main() -> None:
    if isinstance(sys.stdout, io.TextIOWrapper):  # a run cut short still shows its phases
        sys.stdout.reconfigure(line_buffering=True)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--apps", type=int, default=10_000)
    parser.add_argument("--steady-seconds", type=float, default=60.0)
    parser.add_argument("--commits", type=int, default=5)
    parser.add_argument(
        "--no-tune-gc", dest="tune_gc", action="store_false",
        help="CPython's collector defaults, as `headway serve --no-tune-gc`",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(run(args.apps, args.steady_seconds, args.commits, Path(tmp),
                        tune_gc=args.tune_gc))


if __name__ == "__main__":
    main()
