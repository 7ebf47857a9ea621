"""How long `headway demo` takes, against the waiting its own manifests impose.

The baseline is computed in the same run from the demo's Rollout and AnalysisTemplate: the
pauses plus the time each analysis needs for its measurements (count - 1 intervals), for the
good release (every step) and the bad one (one pause, one measurement). The ratio says how
much the machinery (syncs, pod starts, controller steps) adds on top of that floor.

    .venv/bin/python bench/bench_demo.py
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from headway.model.durations import parse_duration

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "examples" / "demo" / "repo" / "apps" / "web"


def wait_floor() -> tuple[float, float]:
    """(good release, bad release until abort) in seconds, from the manifests."""
    steps = yaml.safe_load((APP / "rollout.yaml").read_text())["spec"]["strategy"]["canary"][
        "steps"
    ]
    template = yaml.safe_load((APP / "analysis-template.yaml").read_text())
    metric = template["spec"]["metrics"][0]
    analysis = (int(metric["count"]) - 1) * parse_duration(metric["interval"])
    pauses = [parse_duration(s["pause"]["duration"]) for s in steps if "pause" in s]
    analyses = sum(1 for s in steps if "analysis" in s)
    return sum(pauses) + analyses * analysis, pauses[0]


def main() -> None:
    good_floor, bad_floor = wait_floor()
    with tempfile.TemporaryDirectory(prefix="bench-demo-") as tmp:
        started = time.monotonic()
        result = subprocess.run(
            [sys.executable, "-m", "headway", "demo", "--dir", str(Path(tmp) / "d")],
            capture_output=True,
            text=True,
            check=False,
            env={**os.environ, "COLUMNS": "200"},
        )
        total = time.monotonic() - started
    if result.returncode != 0:
        sys.exit(f"the demo failed:\n{result.stdout}\n{result.stderr}")
    times = dict(re.findall(r"│ (v\d)\s+│ \w+\s+│ \w+\s+│ ([\d.]+)s", result.stdout))
    abort = float(re.search(r"bad commit -> abort\s+│ ([\d.]+)s", result.stdout).group(1))  # type: ignore[union-attr]
    print(f"demo total            {total:6.1f} s")
    print(
        f"v2 good canary        {float(times['v2']):6.1f} s  floor {good_floor:5.1f} s  "
        f"ratio {float(times['v2']) / good_floor:4.2f}"
    )
    print(
        f"v3 commit -> abort    {abort:6.1f} s  floor {bad_floor:5.1f} s  "
        f"ratio {abort / bad_floor:4.2f}"
    )


if __name__ == "__main__":
    main()
