"""Cost of `headway check` per Application, against only loading the same YAML.

Generates a repository of 1,000 Applications in a temporary directory, each a plain directory
source holding a Rollout (canary with an analysis step), two Services, an AnalysisTemplate and
an HPA, then measures in this run (median of several runs):

  yaml load - PyYAML CSafeLoader over every file of the repository (the yardstick: no rules)
  rust load - yaml_rs over every file: the reader Headway uses where it reads as PyYAML does
              (headway.model.yamlrust), alone; shown to say how far below the yardstick
              the parse now is, not to replace it
  load      - Headway's loader: discover Applications, render their directories, index
  check     - `headway check` without printing (`run_check`: the config, the loader and
              every rule)
  cli       - `headway check --no-cache -o json` in a new process, when `--cli` is given:
              interpreter start, imports, compiling conditions (what the in-process rows
              leave out) and parsing every file
  cli cold  - `headway check -o json` with an empty cache of parsed files: a pre-commit
              hook's first run, which parses every file and writes the cache
  cli hook  - the same with the cache warm and one file changed since the last run (each
              round edits one Rollout's image): a pre-commit hook's usual run
  cli before - `headway check -o json` with another checkout's src first on the path
              (`--before OLD/src`) and its cache empty, so old and new code are compared in
              one run, interleaved

The new processes run as an installed `headway` does, with Python's bytecode caches (in a
temporary PYTHONPYCACHEPREFIX, written by the untimed first round) even where the
environment sets PYTHONDONTWRITEBYTECODE, and with their own XDG_CACHE_HOME (the condition
parser's tables, written by the first round, and the cache of parsed files, emptied before
each `cli cold` and `cli before` run). Before, the cli row compiled every Headway module
it imported on each run, which no installation does.

The in-process rows run alike, so their ratios compare like with like: each starts from a
collected heap (the previous row's garbage is not charged to it) and runs with the cyclic
collector paused, as `run_check` runs; the collection when the pause ends, of whatever the
row left in reference cycles, is part of the row's time. (Before, the load row ran with the
collector on and paid collections the check never runs.)

Prints the median wall and CPU time of each, in interleaved rounds, with the ratios to
yaml load (CPU time is the steadier figure on a shared machine; the cli row's CPU is the
child process's).

    .venv/bin/python bench/bench_check.py [--apps N] [--runs N] [--cli [--before OLD/src]]
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import yaml

from headway.cli.check import run_check
from headway.cli.check_loader import RepositoryLoader, normalize_url
from headway.model.yamlload import paused_gc
from headway.source.tree import FilesystemTree

APPS = 1000
RUNS = 2
URL = "https://github.com/example/bench.git"

APPLICATION = """apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: svc-{i}
  namespace: argocd
  finalizers: [resources-finalizer.argocd.argoproj.io]
spec:
  project: workloads
  source: {{repoURL: "{url}", targetRevision: HEAD, path: services/svc-{i}}}
  destination: {{name: prod, namespace: svc-{i}}}
  syncPolicy:
    automated: {{prune: true, selfHeal: true}}
    retry: {{limit: 5, backoff: {{duration: 10s, factor: 2, maxDuration: 3m}}}}
"""

ROLLOUT = """apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: svc-{i}
  annotations: {{argocd.argoproj.io/sync-wave: "1"}}
spec:
  selector: {{matchLabels: {{app: svc-{i}}}}}
  template:
    metadata: {{labels: {{app: svc-{i}}}}}
    spec:
      containers:
        - name: app
          image: registry.example.com/svc-{i}:1.{i}.0
          ports: [{{containerPort: 8080}}]
          env:
            - {{name: LOG_LEVEL, value: info}}
            - {{name: DATABASE_URL, value: "postgres://db/svc-{i}"}}
  strategy:
    canary:
      canaryService: svc-{i}-canary
      stableService: svc-{i}
      steps:
        - setWeight: 25
        - pause: {{duration: 2m}}
        - analysis:
            templates: [{{templateName: svc-{i}-slo}}]
            args: [{{name: hash, valueFrom: {{podTemplateHashValue: Latest}}}}]
        - setWeight: 50
        - pause: {{duration: 5m}}
"""

SERVICES = """apiVersion: v1
kind: Service
metadata: {{name: svc-{i}}}
spec:
  selector: {{app: svc-{i}}}
  ports: [{{port: 80, targetPort: 8080}}]
---
apiVersion: v1
kind: Service
metadata: {{name: svc-{i}-canary}}
spec:
  selector: {{app: svc-{i}}}
  ports: [{{port: 80, targetPort: 8080}}]
"""

ANALYSIS = """apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {{name: svc-{i}-slo}}
spec:
  args: [{{name: hash}}]
  metrics:
    - name: error-rate
      interval: 1m
      count: 5
      failureLimit: 1
      successCondition: len(result) > 0 && result[0] < 0.02
      provider:
        prometheus:
          address: http://prometheus:9090
          query: >-
            sum(rate(http_requests_total{{app="svc-{i}",rollouts_pod_template_hash="{{{{args.hash}}}}",code=~"5.."}}[2m]))
            / sum(rate(http_requests_total{{app="svc-{i}",
            rollouts_pod_template_hash="{{{{args.hash}}}}"}}[2m]))
"""

HPA = """apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: svc-{i}
  annotations: {{argocd.argoproj.io/sync-wave: "2"}}
spec:
  scaleTargetRef: {{apiVersion: argoproj.io/v1alpha1, kind: Rollout, name: svc-{i}}}
  minReplicas: 4
  maxReplicas: 12
"""


def generate(root: Path) -> None:
    (root / "headway-check.yaml").write_text(f"selfURLs: [{URL}]\n")
    (root / "apps").mkdir()
    for i in range(APPS):
        (root / "apps" / f"svc-{i}.yaml").write_text(APPLICATION.format(i=i, url=URL))
        service = root / "services" / f"svc-{i}"
        service.mkdir(parents=True)
        for name, text in (
            ("rollout.yaml", ROLLOUT),
            ("services.yaml", SERVICES),
            ("analysis.yaml", ANALYSIS),
            ("hpa.yaml", HPA),
        ):
            (service / name).write_text(text.format(i=i))


def yaml_load_only(root: Path) -> int:
    count = 0
    with paused_gc():
        for path in sorted(root.rglob("*.yaml")):
            count += sum(1 for _ in yaml.load_all(path.read_text(), Loader=yaml.CSafeLoader))
    return count


def rust_load_only(root: Path) -> int:
    from yaml_rs import loads

    count = 0
    with paused_gc():
        for path in sorted(root.rglob("*.yaml")):
            text = path.read_text()
            read = loads(text)
            count += len(read) if "\n---" in text else 1  # the files here: no leading `---`
    return count


def loader(root: Path) -> RepositoryLoader:
    return RepositoryLoader(tree=FilesystemTree(root), self_urls=frozenset({normalize_url(URL)}))


def load_only(root: Path) -> int:
    with paused_gc():
        return len(loader(root).load().all_objects)


def full_check(root: Path) -> int:
    return len(run_check(root)[0])  # run_check pauses the collector itself


def cli_check(
    root: Path, *, caches: Path, src: str | None = None, options: tuple[str, ...] = ()
) -> int:
    """`headway check -o json` in a new process; its exit status (0: clean). With `src`, that
    checkout's code comes first on the child's path (the `--before` row). `caches` holds the
    bytecode and XDG caches the child uses."""
    command = [sys.executable, "-m", "headway", "check", *options, "-o", "json", str(root)]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(caches / "bytecode")
    env["XDG_CACHE_HOME"] = str(caches / "xdg")
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join([src, env.get("PYTHONPATH", "")])
    done = subprocess.run(command, capture_output=True, check=False, env=env)
    return done.returncode


def cli_cold(root: Path, *, caches: Path, src: str | None = None) -> int:
    """`cli_check` with the cache of parsed files emptied first."""
    shutil.rmtree(caches / "xdg" / "headway" / "check", ignore_errors=True)
    return cli_check(root, caches=caches, src=src)


def cli_hook(root: Path, *, caches: Path) -> int:
    """`cli_check` after one file changed (svc-0's Rollout takes another image tag)."""
    rollout = root / "services" / "svc-0" / "rollout.yaml"
    text = rollout.read_text()
    image = "svc-0:1.0.0"
    edited = (
        text.replace(image, "svc-0:2.0.0") if image in text else text.replace("svc-0:2.0.0", image)
    )
    rollout.write_text(edited)
    return cli_check(root, caches=caches)


def _cpu_seconds() -> float:
    """CPU time of this process and of its finished children (the cli row's process)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def medians(
    measures: dict[str, Callable[[Path], int]], root: Path, rounds: int
) -> dict[str, tuple[float, float, int]]:
    """Median wall and CPU seconds of each measure, and its result, taken in interleaved
    rounds (after one untimed warm-up round) so that the load of a shared machine hits every
    measure alike."""
    walls: dict[str, list[float]] = {label: [] for label in measures}
    cpus: dict[str, list[float]] = {label: [] for label in measures}
    results: dict[str, int] = {}
    for measure in measures.values():
        measure(root)  # imports, compiled conditions, the file cache: not what a round measures
    for _ in range(rounds):
        for label, measure in measures.items():
            gc.collect()  # what the previous row left is not this row's cost
            wall, cpu = time.perf_counter(), _cpu_seconds()
            results[label] = measure(root)
            walls[label].append(time.perf_counter() - wall)
            cpus[label].append(_cpu_seconds() - cpu)
    return {
        label: (statistics.median(walls[label]), statistics.median(cpus[label]), results[label])
        for label in measures
    }


def main() -> None:
    global APPS  # noqa: PLW0603 - the generator reads it; one bench run, one size
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--apps", type=int, default=APPS)
    parser.add_argument("--runs", type=int, default=RUNS)
    parser.add_argument("--cli", action="store_true", help="also time the command in a new process")
    parser.add_argument(
        "--before",
        metavar="SRC",
        help="with --cli, also time the command with another checkout's src (e.g. main's) "
        "first on the path, in the same interleaved rounds (row 'cli before')",
    )
    arguments = parser.parse_args()
    APPS = arguments.apps
    measures: dict[str, Callable[[Path], int]] = {
        "yaml load": yaml_load_only,
        "rust load": rust_load_only,
        "load": load_only,
        "check": full_check,
    }
    with (
        tempfile.TemporaryDirectory(prefix="headway-bench-check-") as tmp,
        tempfile.TemporaryDirectory(prefix="headway-bench-caches-") as caches,
    ):
        if arguments.cli:
            measures["cli"] = partial(cli_check, caches=Path(caches), options=("--no-cache",))
            measures["cli cold"] = partial(cli_cold, caches=Path(caches))
            measures["cli hook"] = partial(cli_hook, caches=Path(caches))
            if arguments.before:
                measures["cli before"] = partial(
                    cli_cold, caches=Path(caches), src=arguments.before
                )
        root = Path(tmp)
        generate(root)
        taken = medians(measures, root, arguments.runs)
    base_wall, base_cpu, documents = taken["yaml load"]
    print(f"{APPS} Applications, {documents} YAML documents, {taken['load'][2]} rendered objects")
    print(f"findings: {taken['check'][2]} (expected 0: the generated repository is clean)")
    if "cli" in taken:
        statuses = {label: result for label, (_, _, result) in taken.items() if "cli" in label}
        print(f"cli exit statuses: {statuses} (expected 0)")
    for label, (wall, cpu, _) in taken.items():
        print(
            f"{label:>10}: wall {wall:7.3f} s  x{wall / base_wall:5.2f}   "
            f"cpu {cpu:7.3f} s  x{cpu / base_cpu:5.2f}   {cpu / APPS * 1e3:6.3f} ms/app"
        )


if __name__ == "__main__":
    main()
