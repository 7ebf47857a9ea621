"""What `headway check -o json` and `headway validate -o json` print over a fixed corpus (and
`headway validate` in text and JSON run as the `headway` program), for comparing two
versions of the code byte for byte (performance work must not change a finding, an error or
a position).

The corpus: examples/, tests/check/fixtures (every found/near_miss/before/after and repos/*),
tests/examples, tests/model/fixtures/field-lines (findings and errors at known lines from
every YAML shape the readers treat apart: anchors, merge keys, flow style, block scalars,
several documents per file, duplicate keys, `!!int ''`, an alias bomb, a syntax error after
good documents) and the repository bench_check.py generates (100 Applications by default). It
is copied once to a directory outside any Git checkout (`--corpus`, kept between runs), so
both versions see the same paths and no Git state (HEAD, dirty files) varies between them.

    # outputs of the code on PYTHONPATH, into a file
    .venv/bin/python bench/check_outputs.py --corpus /tmp/check-corpus --write after.json
    # the same with another checkout's src first, then compare
    .venv/bin/python bench/check_outputs.py --corpus /tmp/check-corpus --compare-with OLD/src

`--compare-with` runs this script a second time under the other src and exits 1 (naming the
first differing case) when any output differs.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

import bench_check
from headway.check.config import CONFIG_FILES
from headway.cli.main import app

REPO = Path(__file__).resolve().parents[1]
SOURCES = ("examples", "tests/check/fixtures", "tests/examples", "tests/model/fixtures/field-lines")
FIXTURE_STATES = ("found", "near_miss", "before", "after")
FIXTURE_URL = "https://github.com/example/fixtures.git"  # tests/check/conftest.py's SELF_URL


def build_corpus(corpus: Path, bench_apps: int) -> None:
    """Copy the corpus once; an existing copy is reused (both versions must see one corpus).
    A directory without a check config gets one naming the URL the fixtures' Applications
    use as this repository, as the rule tests do, so that their sources render."""
    if corpus.exists():
        return
    staging = corpus.with_name(corpus.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    for source in SOURCES:
        shutil.copytree(
            REPO / source, staging / source, ignore=shutil.ignore_patterns("__pycache__", "*.py")
        )
    for root in check_roots(staging):
        if not any((root / name).exists() for name in CONFIG_FILES):
            (root / "headway-check.yaml").write_text(f"selfURLs: [{FIXTURE_URL}]\n")
    bench_check.APPS = bench_apps
    (staging / "bench").mkdir()
    bench_check.generate(staging / "bench")
    staging.rename(corpus)


def check_roots(corpus: Path) -> list[Path]:
    """Every directory `headway check` runs over: each example and example repository, each
    fixture state, and the bench repository."""
    roots = [p for p in sorted((corpus / "examples").iterdir()) if p.is_dir()]
    for fixture in sorted((corpus / "tests/check/fixtures").iterdir()):
        if fixture.name == "repos":
            roots.extend(p for p in sorted(fixture.iterdir()) if p.is_dir())
        else:
            roots.extend(fixture / s for s in FIXTURE_STATES if (fixture / s).is_dir())
    for group in sorted((corpus / "tests/examples").iterdir()):
        if group.is_dir():
            roots.append(group)
            roots.extend(p for p in sorted(group.iterdir()) if p.is_dir())
    roots.append(corpus / "tests/model/fixtures/field-lines")
    if (corpus / "bench").exists():
        roots.append(corpus / "bench")
    return roots


def outputs(corpus: Path) -> dict[str, str]:
    """`exit status` and output of each command, keyed by the command line."""
    runner = CliRunner()
    results: dict[str, str] = {}
    commands = [["check", "-o", "json", str(root)] for root in check_roots(corpus)]
    commands.append(["check", "-o", "sarif", str(corpus / "bench")])
    commands.extend(["validate", "-o", "json", str(root)] for root in check_roots(corpus))
    for command in commands:
        result = runner.invoke(app, command)
        key = " ".join(command).replace(str(corpus), "CORPUS")
        results[key] = f"exit {result.exit_code}\n{result.output}"
    results.update(program_outputs(corpus))
    return results


def program_outputs(corpus: Path) -> dict[str, str]:
    """`validate` in text and in JSON, each as a `headway` process (the entry point's direct
    path, not the Typer app the runner above calls): exit status, output, then errors."""
    results: dict[str, str] = {}
    lines = [["validate", str(root)] for root in check_roots(corpus)]
    lines.extend(["validate", "-o", "json", str(root)] for root in check_roots(corpus))
    for line in lines:
        command = [sys.executable, "-m", "headway", *line]
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            env={**os.environ, "COLUMNS": "100"},
            check=False,
        )
        key = "headway " + " ".join(command[3:]).replace(str(corpus), "CORPUS")
        results[key] = f"exit {done.returncode}\n{done.stdout}{done.stderr}"
    return results


def compare(mine: dict[str, str], theirs: dict[str, str]) -> list[str]:
    differing = [key for key in mine if mine[key] != theirs.get(key)]
    differing.extend(key for key in theirs if key not in mine)
    return differing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--bench-apps", type=int, default=100)
    parser.add_argument("--write", type=Path)
    parser.add_argument("--compare-with", type=Path, help="another checkout's src directory")
    arguments = parser.parse_args()
    if "PYTHONHASHSEED" not in os.environ:
        # Findings equal but for their Application (one Rollout rendered by several apps)
        # come out in set order, which string hashing varies between processes.
        seeded = {**os.environ, "PYTHONHASHSEED": "0"}
        os.execve(sys.executable, [sys.executable, *sys.argv], seeded)
    build_corpus(arguments.corpus, arguments.bench_apps)
    mine = outputs(arguments.corpus)
    if arguments.write:
        arguments.write.write_text(json.dumps(mine, indent=1, sort_keys=True))
    if arguments.compare_with is None:
        print(f"{len(mine)} outputs")
        return
    other = arguments.compare_with.resolve()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(other), str(REPO / "bench")])}
    dump = arguments.corpus.with_name(arguments.corpus.name + ".other.json")
    command = [sys.executable, __file__, "--corpus", str(arguments.corpus), "--write", str(dump)]
    subprocess.run(command, env=env, check=True)
    differing = compare(mine, json.loads(dump.read_text()))
    print(f"{len(mine)} outputs, {len(differing)} differ")
    for key in differing[:10]:
        print(f"  differs: {key}")
    sys.exit(1 if differing else 0)


if __name__ == "__main__":
    main()
