"""How long does refreshing a fleet of Applications take, cold and warm?

1,000 Applications of 20 resources each (Deployments, Services, ConfigMaps, Secrets) in one
Git repository (a real bare repository read through pygit2). A refresh of one app is what
the controller does before deciding anything: resolve the revision, render (through the
render cache), compare with live objects (normalization, diff, health), through the
comparison cache. Live objects are held in memory (the store is timed in bench_store.py), as
the `LiveObjects` the live reader hands out while the store has not moved (a copy of its last
read, with that read's identity).

  baseline     yaml.load_all with PyYAML's C loader over the same manifest bytes
  cold         every app rendered and diffed (empty caches)
  warm         nothing changed: every app refreshed again
  warm+1       one app's manifests changed in a new commit: every app refreshed again

The claim: warm+1 costs close to one app's cold refresh, not the fleet's. Baseline and cold
are measured in alternating rounds (each a fresh reader and comparison cache), and so are
warm and warm+1 (a new commit each round); times are the best round, and the cold/baseline
ratio is the median of each round's pair, with every round's ratio to show the spread.

What a commit adds is a difference of fleet passes of a few tens of milliseconds, so it is
measured in CPU time, app by app, in many cheap rounds (--warm-rounds, a commit each): the
changed app's own refresh, and the other apps' refreshes after the commit minus the mean of
the same apps' refreshes in the passes just before and just after it (at the same commit,
which cancels a load that drifts during the round), shown as the median over rounds of
each round's total, with the quartiles to show the spread; the yardstick is the cold pass's
CPU time per app, from the same run. Split: the changed app, the first app after the commit
(which diffs the commit's tree for the fleet) and the other untouched apps. The claim is a
second estimate, each app's own median over the rounds, summed: the machine's bursts (a few
milliseconds landing on one app in one round) move the median of each round's total by more
than a tenth of a cold app from run to run, and this sum by little.

Each round also makes a control commit, changing a file no app reads, and times the same
passes around it. Its untouched apps make exactly the calls they made before it (the same 80
Python calls each, counted), so what the script shows them adding is the method's floor:
the machine, and the untimed commit and fetch between passes.

The garbage collector runs as `headway serve` runs it: the bench calls the same
`CollectorPolicy` (controllers/collector_policy.py) at the same points as the serve loop -
`started()` before the first pass, `after_pass()` after every full pass (each pass here
refreshes every app once, as a full pass of the serve loop does) - and collects at no other
time between warm passes (until session 7 it ran `gc.collect()` before each, which serve never
does). `--no-tune-gc` runs it as `headway serve --no-tune-gc` does: CPython's defaults.

Run: .venv/bin/python bench/bench_refresh.py [--apps 1000] [--rounds 3] [--warm-rounds 30]
     [--no-tune-gc]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import tempfile
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import pygit2
import yaml

from headway.clock import SystemClock
from headway.controllers.app.live import LiveObjects
from headway.controllers.app.refresh import ComparisonCache
from headway.controllers.app.sources import SourceReader
from headway.controllers.collector_policy import CollectorPolicy, PassSummary
from headway.health import assess, default_registry
from headway.model.application import Application, parse_application
from headway.model.yamlload import Document, forget_earlier_reads
from headway.source.git import GitCache

APPS = 1000

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web-{j}
  labels: {{app: web-{j}, team: t{i}}}
  annotations: {{argocd.argoproj.io/sync-wave: "{j}"}}
spec:
  replicas: 2
  selector: {{matchLabels: {{app: web-{j}}}}}
  template:
    metadata: {{labels: {{app: web-{j}}}}}
    spec:
      containers:
      - name: web
        image: registry.example.com/app-{i}/web:{tag}
        ports: [{{containerPort: 8080}}]
        env: [{{name: MODE, value: prod}}, {{name: LEVEL, value: "{j}"}}]
        resources: {{requests: {{cpu: 100m, memory: 128Mi}}, limits: {{memory: 256Mi}}}}
        readinessProbe: {{httpGet: {{path: /readyz, port: 8080}}, periodSeconds: 5}}
"""
SERVICE = """\
apiVersion: v1
kind: Service
metadata: {{name: web-{j}, labels: {{app: web-{j}}}}}
spec:
  selector: {{app: web-{j}}}
  ports: [{{name: http, port: 80, targetPort: 8080}}]
"""
CONFIG = """\
apiVersion: v1
kind: ConfigMap
metadata: {{name: settings-{j}}}
data: {{LOG_LEVEL: info, FEATURE_{j}: "on", OWNER: team-{i}}}
"""
SECRET = """\
apiVersion: v1
kind: Secret
metadata: {{name: creds-{j}}}
type: Opaque
stringData: {{user: app-{i}, password: s3cret-{j}}}
"""


def manifests(i: int, tag: str = "v1") -> str:
    docs = [DEPLOYMENT.format(i=i, j=j, tag=tag) for j in range(4)]
    docs += [SERVICE.format(i=i, j=j) for j in range(4)]
    docs += [CONFIG.format(i=i, j=j) for j in range(8)]
    docs += [SECRET.format(i=i, j=j) for j in range(4)]
    return "---\n".join(docs)


def commit(repo: pygit2.Repository, files: dict[str, str], message: str) -> None:
    ref = "refs/heads/main"
    parents = [repo.references[ref].target] if ref in repo.references else []
    index = pygit2.Index()
    if parents:
        index.read_tree(repo[parents[0]].peel(pygit2.Commit).tree)
    for path, text in files.items():
        index.add(
            pygit2.IndexEntry(path, repo.create_blob(text.encode()), pygit2.enums.FileMode.BLOB)
        )
    sig = pygit2.Signature("bench", "bench@example.com")
    repo.create_commit(ref, sig, sig, message, index.write_tree(repo), parents)


def application(i: int, url: str) -> dict[str, Any]:
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": f"app-{i:04d}", "namespace": "argocd"},
        "spec": {
            "project": "default",
            "source": {"repoURL": url, "path": f"apps/app-{i:04d}", "targetRevision": "main"},
            "destination": {"server": "https://kubernetes.default.svc", "namespace": f"ns-{i}"},
        },
    }


def as_live(obj: dict[str, Any], n: int) -> dict[str, Any]:
    """What the store would hand back: server fields and, for workloads, a ready status."""
    meta = {**obj["metadata"], "uid": f"uid-{n}", "resourceVersion": str(n), "generation": 1}
    live = {**obj, "metadata": meta}
    if obj["kind"] == "Deployment":
        live["status"] = {
            "observedGeneration": 1,
            "replicas": 2,
            "updatedReplicas": 2,
            "readyReplicas": 2,
            "availableReplicas": 2,
        }
    return live


class Fleet:
    def __init__(self, root: Path, apps: int = APPS) -> None:
        self.repo = pygit2.init_repository(str(root / "remote.git"), bare=True, initial_head="main")
        self.url = (root / "remote.git").as_uri()
        self.texts = {f"apps/app-{i:04d}/all.yaml": manifests(i) for i in range(apps)}
        commit(self.repo, self.texts, "fleet")
        self.raws = [application(i, self.url) for i in range(apps)]
        self.apps: list[Application] = []
        for raw in self.raws:
            app, _ = parse_application(Document(raw, "bench", 0, 0))
            assert app is not None
            self.apps.append(app)
        self.live: dict[str, LiveObjects] = {}


def refresh_all(
    fleet: Fleet,
    reader: SourceReader,
    cache: ComparisonCache,
    *,
    record: bool = False,
    cpu_times: list[float] | None = None,
) -> int:
    """Refresh every app; `cpu_times` gets each app's refresh in CPU seconds."""
    out_of_sync = 0
    for app, raw in zip(fleet.apps, fleet.raws, strict=True):
        started = time.process_time()
        state = reader.desired(app, raw)
        assert not state.errors, state.errors

        def read_live(desired: Any, name: str = app.name) -> LiveObjects:
            if record and name not in fleet.live:
                from headway.sync.resources import key_of

                objects = {key_of(o): as_live(dict(o), n) for n, o in enumerate(desired)}
                fleet.live[name] = LiveObjects(objects)
            # What `LiveReader.managed` hands out while the store has not moved: a copy of
            # its last read, carrying that read's identity.
            read = fleet.live.get(name, LiveObjects({}))
            return LiveObjects(read, read.identity)

        result = cache.refresh(
            app=app.name,
            namespace=app.spec.destination.namespace or "",
            desired_state=state,
            rules=(),
            rules_identity="",
            read_live=read_live,
            assess=assess,
            clock_kinds=default_registry().reads_clock,
        )
        out_of_sync += result.comparison.sync_status == "OutOfSync"
        if cpu_times is not None:
            cpu_times.append(time.process_time() - started)
    return out_of_sync


def timed(fn: Any) -> tuple[float, Any]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def cold_reader(fleet: Fleet, root: Path, clock: SystemClock) -> SourceReader:
    """A reader with a clone of the repository (fetching is not refresh work) and an empty
    render cache."""
    reader = SourceReader(git=GitCache(root / "cache"), clock=clock, poll_seconds=3600)
    reader.desired(fleet.apps[0], fleet.raws[0])
    reader.render_cache = type(reader.render_cache)(max_entries=4096)
    forget_earlier_reads()  # and no file's documents kept from an earlier round's parse
    return reader


def cold_rounds(
    fleet: Fleet, root: Path, rounds: int
) -> tuple[list[float], list[float], list[float], SourceReader, ComparisonCache]:
    """Baseline and cold alternate; each pair is one sample of the ratio, measured close
    together in time so that a neighbour's burst of CPU hits both about alike. Also each
    cold pass's CPU time (the yardstick of what a commit adds)."""
    texts = list(fleet.texts.values())
    baselines: list[float] = []
    colds: list[float] = []
    cold_cpus: list[float] = []
    for _ in range(rounds):
        gc.collect()
        baseline, loaded = timed(
            lambda: [list(yaml.load_all(t, Loader=yaml.CSafeLoader)) for t in texts]
        )
        del loaded
        baselines.append(baseline)
        reader, cache = cold_reader(fleet, root, SystemClock()), ComparisonCache()
        gc.collect()
        cpu_start = time.process_time()
        cold, drift = timed(partial(refresh_all, fleet, reader, cache))
        cold_cpus.append(time.process_time() - cpu_start)
        assert drift == 0, f"{drift} apps out of sync against their own live copy"
        colds.append(cold)
    return baselines, colds, cold_cpus, reader, cache


CHANGED = 7  # the app each round's commit changes


@dataclass(frozen=True)
class CommitCost:
    """One round's pair of passes, in CPU seconds: what the commit added."""

    changed_app: float  # the changed app's refresh after the commit
    others_before: float  # every other app's refresh in the pass before the commit
    others_after: float  # the same apps' first refresh after it
    others_again: float  # and their second (nothing changed since the first)
    first: tuple[float, float, float]  # the first app's three refreshes (it moves the group)
    per_app: tuple[float, ...]  # each app's refresh after the commit minus around it

    @property
    def others_added(self) -> float:
        return self.others_after - (self.others_before + self.others_again) / 2

    @property
    def first_added(self) -> float:
        """What the commit added to the first app refreshed after it: the tree diff that
        moves every untouched app's kept identity to the new commit (`kept_identities`)."""
        before, after, again = self.first
        return after - (before + again) / 2

    @property
    def rest_added(self) -> float:
        """What it added to every other untouched app together (the same calls as before
        the commit: what shows here is the machine's noise, and any cache effect)."""
        return self.others_added - self.first_added

    @property
    def added(self) -> float:
        """The changed app plus what the commit added to everyone else; the changed app's
        own refresh before the commit (a cache hit, tens of microseconds) is not taken off."""
        return self.changed_app + self.others_added


def fetch(fleet: Fleet, reader: SourceReader) -> None:
    """The fetch after a commit, and the ref's resolution, untimed (a network round trip in
    a real controller): through an app of the same repository whose path does not exist, so
    that no app of the fleet does any of its refresh here (the first one to refresh at a new
    commit also compares its trees with the last commit's, which is refresh work)."""
    probe = {**fleet.raws[0], "metadata": {"name": "fetch-probe", "namespace": "argocd"}}
    probe["spec"] = {**probe["spec"], "source": {**probe["spec"]["source"], "path": "no/such"}}
    app, _ = parse_application(Document(probe, "bench", 0, 0))
    assert app is not None
    state = reader.desired(app, probe)
    assert state.errors and "does not exist" in state.errors[0], state.errors


CONTROL_PATH = "docs/notes.md"  # a file no app's source path holds


def warm_rounds(
    fleet: Fleet,
    reader: SourceReader,
    cache: ComparisonCache,
    rounds: int,
    *,
    collector: CollectorPolicy | None,
) -> tuple[list[float], list[float], list[CommitCost], list[CommitCost]]:
    """Each round: a refresh with nothing changed, then one after a commit that changes one
    app's manifests (a new image tag each round), then one with nothing changed again; then
    the control: one after a commit that changes a file no app reads, and one with nothing
    changed. After each pass (a full one), the collector policy's step, as the serve loop
    takes it. The control commit is fetched and diffed as the other is, and every app's
    refresh after it is the same calls as before it: what it shows added to the untouched
    apps is what the bench's passes show with nothing to find (the machine, the untimed
    commit and fetch between passes), the floor under the real commit's figure."""
    warms: list[float] = []
    changed: list[float] = []
    costs: list[CommitCost] = []
    controls: list[CommitCost] = []
    full_pass = PassSummary(steps=len(fleet.apps), keys=len(fleet.apps), caught_up=True)

    def full(cpu_times: list[float]) -> tuple[float, int]:
        took, drift = timed(partial(refresh_all, fleet, reader, cache, cpu_times=cpu_times))
        if collector is not None:
            collector.after_pass(full_pass)
        return took, drift

    def cost(passes: list[list[float]], app: int) -> CommitCost:
        before, after, again = (sum(p) - p[app] for p in passes)
        first = (passes[0][0], passes[1][0], passes[2][0])
        added = tuple(a - (b + c) / 2 for b, a, c in zip(*passes, strict=True))
        return CommitCost(passes[1][app], before, after, again, first, added)

    for n in range(rounds):
        passes: list[list[float]] = [[], [], [], [], []]
        warm, _ = full(passes[0])
        warms.append(warm)
        tag = f"v{n + 2}"
        path = f"apps/app-{CHANGED:04d}/all.yaml"
        commit(fleet.repo, {path: manifests(CHANGED, tag=tag)}, f"app-{CHANGED:04d} {tag}")
        reader.mark_changed(fleet.url)
        fetch(fleet, reader)
        misses_before = cache.misses
        warm_one, drift = full(passes[1])
        assert drift == 1 and cache.misses - misses_before == 1
        changed.append(warm_one)
        full(passes[2])
        commit(fleet.repo, {CONTROL_PATH: f"round {n}\n"}, f"notes {n}")
        reader.mark_changed(fleet.url)
        fetch(fleet, reader)
        misses_before = cache.misses
        _, drift = full(passes[3])
        assert drift == 1 and cache.misses == misses_before  # (app-0007 is still out of sync)
        full(passes[4])
        costs.append(cost(passes[:3], CHANGED))
        controls.append(cost(passes[2:], CHANGED))
    return warms, changed, costs, controls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--apps", type=int, default=APPS, help="Applications (default 1000)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of each pair (default 3)")
    parser.add_argument(
        "--warm-rounds", type=int, default=30, help="rounds of warm passes (default 30)"
    )
    parser.add_argument(
        "--no-tune-gc", dest="tune_gc", action="store_false",
        help="CPython's collector defaults, as `headway serve --no-tune-gc`",
    )
    args = parser.parse_args()
    apps = args.apps
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        fleet = Fleet(root, apps)
        total = sum(len(t) for t in fleet.texts.values())
        print(f"{apps} apps x 20 resources, {total / 1e6:.1f} MB of YAML in one repository")
        # Record what the cluster would hold (untimed), through the same render path.
        reader = SourceReader(git=GitCache(root / "rec"), clock=SystemClock())
        refresh_all(fleet, reader, ComparisonCache(), record=True)
        collector = CollectorPolicy() if args.tune_gc else None
        if collector is not None:
            collector.started()
        baselines, colds, cold_cpus, reader, cache = cold_rounds(fleet, root, args.rounds)
        if collector is not None:  # the last cold pass is the kept reader's first full pass
            collector.after_pass(PassSummary(steps=apps, keys=apps, caught_up=True))
        warms, changed, costs, controls = warm_rounds(
            fleet, reader, cache, args.warm_rounds, collector=collector
        )
        if collector is not None:
            print(f"collector policy: {collector.freezes} freezes, {collector.refreezes} of"
                  " them re-freezes")
        report(apps, baselines=baselines, colds=colds, warms=warms, changed=changed)
        report_commit_cost(costs, controls, cold_cpu_per_app=min(cold_cpus) / apps)


def report(
    apps: int,
    *,
    baselines: list[float],
    colds: list[float],
    warms: list[float],
    changed: list[float],
) -> None:
    ratios = sorted(c / b for b, c in zip(baselines, colds, strict=True))
    baseline, cold, warm = min(baselines), min(colds), min(warms)
    per_app_cold = cold / apps
    print(f"baseline (CSafeLoader load)  {baseline:7.2f} s  {baseline / apps * 1e3:6.2f} ms/app")
    print(f"cold refresh (render+diff)   {cold:7.2f} s  {per_app_cold * 1e3:6.2f} ms/app")
    print(
        f"cold / baseline, same round  median {statistics.median(ratios):.2f}x"
        f"  (rounds: {', '.join(f'{r:.2f}' for r in ratios)})"
    )
    print(
        f"warm, nothing changed        {warm:7.2f} s  {warm / apps * 1e3:6.2f} ms/app"
        f"   = {warm / cold:5.3f} of cold"
    )
    print(f"warm, one app changed        {min(changed):7.2f} s  (wall; what it adds: below)")
    print(f"(times: best of {len(colds)} rounds; the ratio pairs each round's two runs)")


def report_commit_cost(
    costs: list[CommitCost], controls: list[CommitCost], *, cold_cpu_per_app: float
) -> None:
    """What the commit added, in cold apps' worth of CPU, each round and the median; and
    what the control commit (no app's files) added to the same apps."""

    def line(label: str, values: list[float]) -> None:
        worth = [v / cold_cpu_per_app for v in values]
        low, _, high = statistics.quantiles(worth, n=4)
        print(
            f"  {label:<32} median {statistics.median(values) * 1e3:6.2f} ms"
            f" = {statistics.median(worth):5.2f} cold apps  (quartiles {low:.2f} to {high:.2f})"
        )

    def by_app(rounds: list[CommitCost]) -> list[float]:
        """Each app's median over the rounds, in cold apps: a burst of the machine's noise
        lands on one app in one round and moves their sum by nothing, where it moves that
        round's total."""
        rows = zip(*(c.per_app for c in rounds), strict=True)
        return [statistics.median(values) / cold_cpu_per_app for values in rows]

    print(
        f"one app changed, CPU time paired per round, {len(costs)} rounds (a cold app:"
        f" {cold_cpu_per_app * 1e3:.2f} ms CPU)"
    )
    real, control = by_app(costs), by_app(controls)
    robust, others = sum(real), sum(real) - real[CHANGED] - real[0]
    floor = sum(control) - control[CHANGED] - control[0]
    print(
        f"  {'what the commit adds (the claim)':<32} {robust * cold_cpu_per_app * 1e3:6.2f} ms"
        f" = {robust:5.2f} cold apps: each app's median over the rounds, summed (changed app"
        f" {real[CHANGED]:.2f}, first app {real[0]:.2f}, the other {len(real) - 2}"
        f" {others:.2f}; the same apps after the control commit {floor:.2f})"
    )
    print(
        f"  {'the same, less the control':<32} {'':9} = {robust - floor:5.2f} cold apps"
        "  (the control's untouched apps make the same calls as before it: their share is"
        " the method's floor)"
    )
    print("  each round's figures (median over the rounds, quartiles):")
    line("added by the commit", [c.added for c in costs])
    line("the changed app's refresh", [c.changed_app for c in costs])
    line("every other app, after - before", [c.others_added for c in costs])
    line("  the first app: the tree diff", [c.first_added for c in costs])
    line("  the other untouched apps", [c.rest_added for c in costs])
    line("  the same, control commit", [c.rest_added for c in controls])


if __name__ == "__main__":
    main()
