"""What a `headway` call costs before it does anything, against other programs' start-up.

Yardsticks measured in the same run: `python -c pass` (the interpreter alone) and, where it
is installed, `kubectl version --client` (the CLI users compare with). Each command runs as
a fresh process; the figure is the median wall time of N runs, printed with its ratios.

    .venv/bin/python bench/bench_cli_startup.py [--runs N] [--before SRC]

`--before SRC` (a `src` directory of another checkout, e.g. from `git archive`) also runs
every `headway` case with that code on PYTHONPATH, interleaved in the same rounds.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEADWAY = [sys.executable, "-m", "headway"]


def wall_s(argv: list[str]) -> float:
    started = time.perf_counter()
    env = dict(os.environ)
    if argv[:1] == ["env"]:  # ["env", "PYTHONPATH=...", *command]
        key, _, value = argv[1].partition("=")
        env[key], argv = value, argv[2:]
    subprocess.run(argv, cwd=ROOT, capture_output=True, check=False, env=env)
    return time.perf_counter() - started


def median_walls_s(cases: dict[str, list[str]], runs: int) -> dict[str, float]:
    """Median wall time per case, run in interleaved rounds so machine load hits all alike."""
    samples: dict[str, list[float]] = {label: [] for label in cases}
    for _ in range(runs):
        for label, argv in cases.items():
            samples[label].append(wall_s(argv))
    return {label: statistics.median(taken) for label, taken in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--before", type=Path, help="another checkout's src/ to compare with")
    arguments = parser.parse_args()
    runs = arguments.runs

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
        "headway get pods (no runtime)": [*HEADWAY, "get", "pods", "--state-dir", "/nonexistent"],
        "headway check --help": [*HEADWAY, "check", "--help"],
        "headway serve --help": [*HEADWAY, "serve", "--help"],
        "headway diff --help": [*HEADWAY, "diff", "--help"],
        "headway drill --help": [*HEADWAY, "drill", "--help"],
        "headway analysis run --help": [*HEADWAY, "analysis", "run", "--help"],
        "headway runtime up --help": [*HEADWAY, "runtime", "up", "--help"],
        "headway demo --help": [*HEADWAY, "demo", "--help"],
        "headway check --no-such-option": [*HEADWAY, "check", "--no-such-option"],
    }
    if arguments.before:
        before = f"PYTHONPATH={arguments.before.resolve()}"
        cases = {
            **cases,
            **{f"before: {label}": ["env", before, *argv] for label, argv in cases.items()},
        }
    medians = median_walls_s({**yardsticks, **cases}, runs)
    python = medians["python -c pass"]
    yard = medians.get("kubectl version --client")
    print(f"{'command':42} {'median s':>9} {'x python':>9} {'x kubectl':>10}")
    for label, took in medians.items():
        versus_kubectl = f"{took / yard:10.2f}" if yard else f"{'-':>10}"
        print(f"{label:42} {took:9.3f} {took / python:9.2f} {versus_kubectl}")


if __name__ == "__main__":
    main()
