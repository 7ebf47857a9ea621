"""What a `headway` call costs before it does anything, against other programs' start-up.

Yardsticks measured in the same run: `python -c pass` (the interpreter alone) and, where it
is installed, `kubectl version --client` (the CLI users compare with). Each command runs as
a fresh process; the figure is the median wall time of N runs, printed with its ratios.

    .venv/bin/python bench/bench_cli_startup.py [--runs N]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEADWAY = [sys.executable, "-m", "headway"]


def median_wall_s(argv: list[str], runs: int) -> float:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(argv, cwd=ROOT, capture_output=True, check=False)
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11)
    runs = parser.parse_args().runs

    python = median_wall_s([sys.executable, "-c", "pass"], runs)
    kubectl = shutil.which("kubectl")
    yard = median_wall_s([kubectl, "version", "--client"], runs) if kubectl else None
    cases = {
        "headway --help": [*HEADWAY, "--help"],
        "headway --version": [*HEADWAY, "--version"],
        "headway app --help": [*HEADWAY, "app", "--help"],
        "headway validate examples/": [*HEADWAY, "validate", "examples/"],
        "headway get pods (no runtime)": [*HEADWAY, "get", "pods", "--state-dir", "/nonexistent"],
    }
    print(f"{'command':34} {'median s':>9} {'x python':>9} {'x kubectl':>10}")
    print(f"{'python -c pass':34} {python:9.3f} {1.0:9.2f} {'':>10}")
    if yard is not None:
        print(f"{'kubectl version --client':34} {yard:9.3f} {yard / python:9.2f} {1.0:10.2f}")
    for label, argv in cases.items():
        took = median_wall_s(argv, runs)
        versus_kubectl = f"{took / yard:10.2f}" if yard else f"{'-':>10}"
        print(f"{label:34} {took:9.3f} {took / python:9.2f} {versus_kubectl}")


if __name__ == "__main__":
    main()
