"""What a `headway` call costs before it does anything, against other programs' start-up.

Yardsticks measured in the same run: `python -c pass` (the interpreter alone) and, where it
is installed, `kubectl version --client` (the CLI users compare with). Each command runs as
a fresh process; the figures are the median wall time of N runs, with its ratios, and the
median CPU time (user + system of the child process), which a loaded machine inflates far
less than wall time.

Commands run as an installed `headway` does, with Python's bytecode caches: an untimed first
round writes them (under a temporary PYTHONPYCACHEPREFIX, so no checkout gets __pycache__
directories), even where the environment sets PYTHONDONTWRITEBYTECODE. Without caches every
run would compile each Headway module it imports, which no user's installation does. The
same round keeps each help screen (`cli/help_cache.py`, in a temporary XDG_CACHE_HOME), as
a user's first call of that help does; the row "serve --help (rendered)" turns that off
(HEADWAY_HELP_CACHE=0): what the first call of a help costs.

    .venv/bin/python bench/bench_cli_startup.py [--runs N] [--before SRC]

`--before SRC` (a `src` directory of another checkout, e.g. from `git archive`) also runs
every `headway` case with that code on PYTHONPATH, interleaved in the same rounds.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEADWAY = [sys.executable, "-m", "headway"]


def children_cpu_s() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def with_bytecode_caches(bytecode_dir: str) -> dict[str, str]:
    """This environment, with Python writing and reading bytecode caches in `bytecode_dir`."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPYCACHEPREFIX": bytecode_dir}


def wall_and_cpu_s(argv: list[str], base_env: dict[str, str]) -> tuple[float, float]:
    env = dict(base_env)
    if argv[:1] == ["env"]:  # ["env", "PYTHONPATH=...", *command]
        key, _, value = argv[1].partition("=")
        env[key], argv = value, argv[2:]
    cpu_before, started = children_cpu_s(), time.perf_counter()
    subprocess.run(argv, cwd=ROOT, capture_output=True, check=False, env=env)
    return time.perf_counter() - started, children_cpu_s() - cpu_before


def medians_s(cases: dict[str, list[str]], runs: int) -> dict[str, tuple[float, float]]:
    """Median (wall, CPU) per case, run in interleaved rounds so machine load hits all alike."""
    walls: dict[str, list[float]] = {label: [] for label in cases}
    cpus: dict[str, list[float]] = {label: [] for label in cases}
    with (
        tempfile.TemporaryDirectory(prefix="headway-bench-bytecode-") as bytecode_dir,
        tempfile.TemporaryDirectory(prefix="headway-bench-cache-") as cache_dir,
    ):
        env = {**with_bytecode_caches(bytecode_dir), "XDG_CACHE_HOME": cache_dir}
        for argv in cases.values():  # writes the bytecode caches and keeps the help screens
            wall_and_cpu_s(argv, env)
        for _ in range(runs):
            for label, argv in cases.items():
                wall, cpu = wall_and_cpu_s(argv, env)
                walls[label].append(wall)
                cpus[label].append(cpu)
    return {
        label: (statistics.median(walls[label]), statistics.median(cpus[label])) for label in cases
    }


# A repository of plain Kubernetes manifests (no Argo or Headway kind): what `validate` of it
# costs is start-up and the YAML reader, none of the typed models.
PLAIN_MANIFESTS = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: "web:1"}]
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: web}
data: {LOG_LEVEL: info}
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--before", type=Path, help="another checkout's src/ to compare with")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="headway-bench-plain-") as plain:
        (Path(plain) / "web.yaml").write_text(PLAIN_MANIFESTS)
        report(runs=arguments.runs, before=arguments.before, plain_manifests=plain)


def report(*, runs: int, before: Path | None, plain_manifests: str) -> None:
    kubectl = shutil.which("kubectl")
    yardsticks = {"python -c pass": [sys.executable, "-c", "pass"]}
    if kubectl:
        yardsticks["kubectl version --client"] = [kubectl, "version", "--client"]
    cases = {
        "headway --help": [*HEADWAY, "--help"],
        "headway --version": [*HEADWAY, "--version"],
        "headway app --help": [*HEADWAY, "app", "--help"],
        "headway app list --help": [*HEADWAY, "app", "list", "--help"],
        "headway rollouts get --help": [*HEADWAY, "rollouts", "get", "--help"],
        "headway validate examples/": [*HEADWAY, "validate", "examples/"],
        "headway validate (plain manifests)": [*HEADWAY, "validate", plain_manifests],
        "headway check (no such path)": [*HEADWAY, "check", "/nonexistent"],
        "headway get pods (no runtime)": [*HEADWAY, "get", "pods", "--state-dir", "/nonexistent"],
        "headway check --help": [*HEADWAY, "check", "--help"],
        "headway serve --help": [*HEADWAY, "serve", "--help"],
        "headway serve --help (rendered)": [
            *["env", "HEADWAY_HELP_CACHE=0"],
            *[*HEADWAY, "serve", "--help"],
        ],
        "headway diff --help": [*HEADWAY, "diff", "--help"],
        "headway drill --help": [*HEADWAY, "drill", "--help"],
        "headway analysis run --help": [*HEADWAY, "analysis", "run", "--help"],
        "headway runtime up --help": [*HEADWAY, "runtime", "up", "--help"],
        "headway demo --help": [*HEADWAY, "demo", "--help"],
        "headway check --no-such-option": [*HEADWAY, "check", "--no-such-option"],
    }
    if before:
        old_path = f"PYTHONPATH={before.resolve()}"
        cases = {
            **cases,
            **{f"before: {label}": ["env", old_path, *argv] for label, argv in cases.items()},
        }
    medians = medians_s({**yardsticks, **cases}, runs)
    python, python_cpu = medians["python -c pass"]
    yard = medians.get("kubectl version --client", (0.0, 0.0))[0]
    print(f"load average {os.getloadavg()[0]:.1f}; medians of {runs} interleaved rounds")
    print(
        f"{'command':42} {'wall s':>7} {'x python':>9} {'x kubectl':>10} {'cpu s':>7} "
        f"{'cpu x python':>13}"
    )
    for label, (took, cpu) in medians.items():
        versus_kubectl = f"{took / yard:10.2f}" if yard else f"{'-':>10}"
        print(
            f"{label:42} {took:7.3f} {took / python:9.2f} {versus_kubectl} {cpu:7.3f} "
            f"{cpu / python_cpu:13.2f}"
        )


if __name__ == "__main__":
    main()
