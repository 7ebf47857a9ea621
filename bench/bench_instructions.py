"""Instructions a `headway` command executes in a new process, counted by valgrind's cachegrind.

Wall time on a shared machine moves by a fifth from run to run; an instruction count of the
same command repeats to about a tenth of a percent. So a change to start-up, or to what a
first run pays, can be judged here before it is timed (docs/performance.md, "The first run
in a new process: teardown, spinning threads, generated code and a second core"). Counts are
not time: a cache miss costs more than an add. Time the change with the other scripts too.

Each case is `python -m headway ...` in a new process, as an installed `headway` runs it:
bytecode and XDG caches written by an untimed run of every case before any is counted (the
kept dataclass code then holds every case's, as a user's does), PYTHONHASHSEED=0,
and OPENBLAS_NUM_THREADS=1 (a spinning OpenBLAS thread's count varies with timing):

  --help                  the program and Typer, no command module
  app list --help         one command module's options
  validate examples/      the example repository, validated
  check (first run)       bench_check.py's repository (--apps Applications) with the cache
                          of parsed files emptied before the run: a pre-commit hook's first
                          run. Its forked child (cli/check_prefetch.py) is counted apart.
  check --no-cache        the same, reading and writing no cache, with no child

With `--before SRC` (another checkout's `src`, e.g. from `git archive`), every case also runs
with that code first on PYTHONPATH, and the ratio is printed.

    .venv/bin/python bench/bench_instructions.py [--apps 1000] [--before OLD/src]

Needs `valgrind` (Debian's package; apt-get install valgrind).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import bench_check

ROOT = Path(__file__).resolve().parent.parent
_REFS = re.compile(r"^==(\d+)== I\s+refs:\s+([\d,]+)", re.MULTILINE)


def counted(argv: list[str], env: dict[str, str]) -> tuple[int, int]:
    """Instructions of the process started with `argv`, and of its forked children."""
    with tempfile.TemporaryDirectory(prefix="headway-bench-cachegrind-") as out:
        command = [
            "valgrind",
            "--tool=cachegrind",
            "--cache-sim=no",
            f"--cachegrind-out-file={out}/cachegrind.%p",
            *argv,
        ]
        process = subprocess.Popen(  # valgrind runs the command in this very process
            command,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env=env,
        )
        _, report = process.communicate()
    found = [(int(pid), int(refs.replace(",", ""))) for pid, refs in _REFS.findall(report)]
    own = [refs for pid, refs in found if pid == process.pid]
    if process.returncode not in (0, 1) or not own:
        raise SystemExit(f"{' '.join(argv)} failed ({process.returncode}):\n{report[-2000:]}")
    return own[0], sum(refs for pid, refs in found if pid != process.pid)


def cases(repository: Path) -> dict[str, list[str]]:
    headway = [sys.executable, "-m", "headway"]
    return {
        "--help": [*headway, "--help"],
        "app list --help": [*headway, "app", "list", "--help"],
        "validate examples/": [*headway, "validate", "examples/"],
        "check (first run)": [*headway, "check", "-o", "json", str(repository)],
        "check --no-cache": [*headway, "check", "--no-cache", "-o", "json", str(repository)],
    }


def environment(caches: Path, src: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(
        PYTHONPYCACHEPREFIX=str(caches / "bytecode"),
        XDG_CACHE_HOME=str(caches / "xdg"),
        PYTHONHASHSEED="0",
        OPENBLAS_NUM_THREADS="1",
    )
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join([src, env.get("PYTHONPATH", "")])
    return env


def measure(repository: Path, caches: Path, src: str | None) -> dict[str, tuple[int, int]]:
    env = environment(caches, src)
    for argv in cases(repository).values():  # every case's caches first, as a user has them
        subprocess.run(argv, capture_output=True, cwd=ROOT, env=env, check=False)
    found: dict[str, tuple[int, int]] = {}
    for label, argv in cases(repository).items():
        if label == "check (first run)":
            shutil.rmtree(caches / "xdg" / "headway" / "check", ignore_errors=True)
        found[label] = counted(argv, env)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--apps", type=int, default=bench_check.APPS)
    parser.add_argument("--before", metavar="SRC", help="another checkout's src, compared")
    arguments = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (apt-get install valgrind)")
    bench_check.APPS = arguments.apps
    with tempfile.TemporaryDirectory(prefix="headway-bench-instructions-") as tmp:
        repository = Path(tmp) / "repository"
        repository.mkdir()
        bench_check.generate(repository)
        now = measure(repository, Path(tmp) / "now", None)
        before = None
        if arguments.before:
            before = measure(repository, Path(tmp) / "before", arguments.before)
    print(f"instructions (cachegrind), {arguments.apps} Applications for the check rows")
    for label, (own, children) in now.items():
        line = f"{label:>20}: {own / 1e6:9.1f} M"
        if children:
            line += f"  (+ {children / 1e6:.1f} M in a forked child)"
        if before is not None:
            old, old_children = before[label]
            line += f"   before {old / 1e6:9.1f} M   x{own / old:5.3f}"
            if old_children:
                line += f" (its child {old_children / 1e6:.1f} M)"
        print(line)


if __name__ == "__main__":
    main()
