"""A first `headway check` parses half of its files in a forked child, which then validates
what it parsed (cli/check_prefetch.py). The findings, the exit status, the cache of parsed
files and the validation answers kept are those of a run without the child; a failing or
abandoned child changes nothing; the child is only started where it is sound. Every case
runs the program (`entry.run`) in a new interpreter, as a user runs it: the child is never
forked from the test process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from check.test_check_drill_cache import ROLLOUT as DRILLED
from headway.cli import check_drill_cache
from headway.cli.check_cache_files import cache_file, unsealed
from headway.cli.check_parse_cache import open_cache
from headway.cli.check_prefetch import MIN_FILES

pytestmark = pytest.mark.skipif(
    not hasattr(os, "fork") or sys.platform == "darwin", reason="the child is forked"
)

APP = """\
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {{name: app-{i}, namespace: argocd}}
spec:
  project: default
  source: {{repoURL: https://example.com/repo.git, path: services/svc-{i}, targetRevision: main}}
  destination: {{server: https://kubernetes.default.svc, namespace: ns-{i}}}
"""
SERVICE = """\
apiVersion: v1
kind: Service
metadata:
  name: svc-{i}
  annotations: {{notes: "{notes}"}}
spec:
  selector: {{app: svc-{i}}}
  ports: [{{port: 80, targetPort: {port}}}]
"""

# Runs the program; reports what the child answered (when one was started) on stderr.
PROGRAM = """
import json, os, sys
from headway.cli import check_prefetch
if os.environ.get("CHILD") == "fails":
    check_prefetch._parsed = lambda tree, share: 1 / 0
if os.environ.get("CHILD") == "sleeps":
    import time
    check_prefetch._parsed = lambda tree, share: time.sleep(60) or {}
if os.environ.get("CHILD") == "fails to validate":
    check_prefetch._validated = lambda cache, memo: 1 / 0
if os.environ.get("CHILD") == "fails to drill":
    check_prefetch._drilled = lambda cache, memo, settings: 1 / 0
if os.environ.get("CHILD") == "slow to validate":
    import time
    validated = check_prefetch._validated
    check_prefetch._validated = lambda cache, memo: time.sleep(60) or validated(cache, memo)
if os.environ.get("CHILD") == "slow to drill":
    import time
    drilled = check_prefetch._drilled
    check_prefetch._drilled = lambda *args: time.sleep(60) or drilled(*args)
if os.environ.get("PARENT_WAITS"):  # for the child's answers, as a slower parent would
    import time
    from headway.cli import check_drill_cache
    def waiting(method, kind):
        def wait(self, key):
            while self.prefetch is not None and not self.prefetch.ready(kind):
                time.sleep(0.01)
            return method(self, key)
        return wait
    answers = check_drill_cache.DrillAnswers
    answers.validation = waiting(answers.validation, "validation")
    answers.verdict = waiting(answers.verdict, "drills")
report = {"started": None, "taken": None, "validated": None, "parent validated": 0,
          "drilled": None, "parent drills": 0}
start = check_prefetch.prefetch_parses
def started(tree, cache, answers=None, **options):
    prefetch = start(tree, cache, answers, **options)
    if prefetch is not None:
        report["started"] = {"pid": prefetch.pid, "paths": sorted(prefetch.paths)}
    return prefetch
check_prefetch.prefetch_parses = started
def lent(message):
    return len(message["answers"]) if isinstance(message, dict) else 0
def count(name, key, measure):
    method = getattr(check_prefetch.Prefetch, name)
    def counted(self):
        found = method(self)
        report[key] = measure(found)
        return found
    setattr(check_prefetch.Prefetch, name, counted)
count("take", "taken", len)
count("take_validation", "validated", lent)
count("take_drills", "drilled", lent)
from headway.cli import check_drill
drill_numbers = check_drill._drill_numbers
def parent_drills(*args):
    report["parent drills"] += 1
    return drill_numbers(*args)
check_drill._drill_numbers = parent_drills
from headway.cli import check_validation
validate = check_validation.validate_documents
def counted(documents, **options):
    report["parent validated"] += len(documents)
    return validate(documents, **options)
check_validation.validate_documents = counted
import atexit
atexit.register(lambda: print(json.dumps(report), file=sys.stderr))
if os.environ.get("THREAD"):
    import threading, time
    threading.Thread(target=time.sleep, args=(3,), daemon=True).start()
sys.argv = ["headway", "check", *sys.argv[1:]]
from headway.cli import entry
entry.run()
"""


def rollouts(root: Path, apps: int) -> Path:
    """`apps` Applications of a canary Rollout each, its AnalysisTemplate in the same
    directory (two plans among them: every third template counts differently); the last
    one's template is not beside it (in a directory below, which its recursive source
    reads and the child never guesses from)."""
    (root / "apps").mkdir(parents=True)
    (root / "headway-check.yaml").write_text("selfURLs: [https://example.com/repo.git]\n")
    recursive = APP.replace(
        "path: services/svc-{i}", "path: services/svc-{i}, directory: {{recurse: true}}"
    )
    for i in range(apps):
        (root / "apps" / f"app-{i:04d}.yaml").write_text(recursive.format(i=i))
        text = DRILLED.format(i=i, weight=25, count=5 if i % 3 else 3, limit=1)
        rollout, template = text.split("---\n")
        directory = root / "services" / f"svc-{i}"
        home = directory if i < apps - 1 else directory / "shared"
        home.mkdir(parents=True)
        (directory / "rollout.yaml").write_text(rollout)
        (home / "analysis.yaml").write_text(template)
    return root


def repository(root: Path, apps: int) -> Path:
    """`apps` Applications with a Service each (two manifest files an app), one of the
    Services broken YAML, so that a parse with diagnostics is in the child's half too. The
    Services' notes make the child's parse entries more than a pipe holds (64 KB on Linux):
    the child's writes then wait for the parent to read, as they do in a large repository."""
    (root / "apps").mkdir(parents=True)
    for i in range(apps):
        (root / "apps" / f"app-{i:04d}.yaml").write_text(APP.format(i=i))
        (root / "services" / f"svc-{i}").mkdir(parents=True)
        text = SERVICE.format(i=i, port=8080 + i % 7, notes=f"service {i} " * 100)
        if i == apps - 1:
            text = text.replace("ports: [", "ports: [[")  # unclosed: a YAML error
        (root / "services" / f"svc-{i}" / "service.yaml").write_text(text)
    return root


def run(
    repo: Path, cache: Path, *argv: str, **env: str
) -> tuple[subprocess.CompletedProcess[str], dict[str, object]]:
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, *argv, str(repo)],
        capture_output=True,
        text=True,
        env={**os.environ, "XDG_CACHE_HOME": str(cache), **env},
        timeout=180,
        check=False,
    )
    report: dict[str, object] = json.loads(done.stderr.strip().splitlines()[-1])
    return done, report


def cached_parses(repo: Path, cache: Path) -> dict[str, bytes]:
    return open_cache(repo, directory=cache / "headway" / "check").known


def kept_drill_cache(repo: Path, cache: Path) -> dict[str, Any]:
    """The drill cache the run kept, read as stored (the file is trusted only by the
    program that wrote it: same interpreter, same module search path)."""
    file = cache_file(repo, prefix="drills", directory=cache / "headway" / "check")
    stored = unsealed(file, check_drill_cache._FORMAT)
    assert isinstance(stored, dict)
    return stored


def kept_answers(repo: Path, cache: Path, *kinds: str) -> dict[str, object]:
    """The drill cache's answers of `kinds` ("valid", "inputs", "plan") the run kept."""
    answers = kept_drill_cache(repo, cache)["answers"]
    return {key: value for key, value in answers.items() if key.split(":")[0] in kinds}


def kept_validations(repo: Path, cache: Path) -> dict[str, object]:
    return kept_answers(repo, cache, "valid")


NOT_STARTED = {"started": None, "taken": None, "validated": None, "drilled": None}


@pytest.fixture(scope="module")
def large(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return repository(tmp_path_factory.mktemp("large"), MIN_FILES // 2 + 20)


def test_a_first_run_parses_half_in_a_child_and_finds_the_same(large: Path, tmp_path: Path) -> None:
    ahead, report = run(large, tmp_path / "ahead", "-o", "json", PARENT_WAITS="1")
    serial, serial_report = run(
        large, tmp_path / "serial", "-o", "json", HEADWAY_CHECK_PREFETCH="0"
    )
    started = report["started"]
    assert isinstance(started, dict)
    assert len(started["paths"]) >= MIN_FILES // 2  # the second half of the manifest files
    assert isinstance(report["taken"], int)
    assert report["taken"] == len(started["paths"]) - 1  # all but the broken file
    # One document a cleanly parsed file; the parent validated the others itself.
    assert report["validated"] == report["taken"]
    assert report["parent validated"] == serial_report["parent validated"] - report["validated"]
    assert {k: serial_report[k] for k in NOT_STARTED} == NOT_STARTED
    assert serial.returncode == 1  # the broken file and the default project are findings
    assert (ahead.stdout, ahead.returncode) == (serial.stdout, serial.returncode)
    assert "svc-" in ahead.stdout  # the broken file is reported from the child's half
    assert cached_parses(large, tmp_path / "ahead") == cached_parses(large, tmp_path / "serial")
    kept = kept_validations(large, tmp_path / "ahead")
    assert len(kept) == serial_report["parent validated"]  # (the broken file reads as none)
    assert kept == kept_validations(large, tmp_path / "serial")


def test_a_child_that_fails_to_validate_leaves_the_parent_to_validate(
    large: Path, tmp_path: Path
) -> None:
    failed, report = run(large, tmp_path / "failed", "-o", "json", CHILD="fails to validate")
    serial, serial_report = run(
        large, tmp_path / "serial", "-o", "json", HEADWAY_CHECK_PREFETCH="0"
    )
    assert isinstance(report["taken"], int) and report["taken"] > 0  # its parses came whole
    assert report["validated"] == 0
    assert report["parent validated"] == serial_report["parent validated"]
    assert (failed.stdout, failed.returncode) == (serial.stdout, serial.returncode)
    assert kept_validations(large, tmp_path / "failed") == kept_validations(
        large, tmp_path / "serial"
    )


def test_the_child_drills_the_rollouts_beside_their_templates(tmp_path: Path) -> None:
    repo = rollouts(tmp_path / "repo", MIN_FILES // 3 + 10)
    ahead, report = run(repo, tmp_path / "ahead", "-o", "json", PARENT_WAITS="1")
    serial, serial_report = run(repo, tmp_path / "serial", "-o", "json", HEADWAY_CHECK_PREFETCH="0")
    assert report["started"] is not None
    assert isinstance(report["drilled"], int) and report["drilled"] > 0
    assert serial_report["parent drills"] == 2  # two plans in the repository
    assert report["parent drills"] == 0  # both drilled by the child, from its half
    assert (ahead.stdout, ahead.returncode) == (serial.stdout, serial.returncode)
    kinds = ("inputs", "plan")
    assert kept_answers(repo, tmp_path / "ahead", *kinds) == kept_answers(
        repo, tmp_path / "serial", *kinds
    )
    # The answers hold while the code that made them is unchanged: the drill's modules
    # (loaded by the child only) are among the files the cache records, as in a serial run.
    recorded = kept_drill_cache(repo, tmp_path / "ahead")["code"]
    for module in ("headway/drill/summary.py", "headway/drill/replay.py", "numpy/__init__.py"):
        assert any(path.endswith(module) for path in recorded), module


def test_a_child_that_fails_to_drill_leaves_the_parent_to_drill(tmp_path: Path) -> None:
    repo = rollouts(tmp_path / "repo", MIN_FILES // 3 + 10)
    failed, report = run(repo, tmp_path / "failed", "-o", "json", CHILD="fails to drill")
    serial, serial_report = run(repo, tmp_path / "serial", "-o", "json", HEADWAY_CHECK_PREFETCH="0")
    assert isinstance(report["validated"], int) and report["validated"] > 0  # came whole
    assert report["drilled"] == 0
    assert report["parent drills"] == serial_report["parent drills"] == 2
    assert (failed.stdout, failed.returncode) == (serial.stdout, serial.returncode)
    assert kept_answers(repo, tmp_path / "failed", "inputs", "plan", "valid") == kept_answers(
        repo, tmp_path / "serial", "inputs", "plan", "valid"
    )


@pytest.mark.parametrize("slow", ["validate", "drill"])
def test_a_slow_child_does_not_hold_the_parent(tmp_path: Path, slow: str) -> None:
    """The parent asks whether the child's answers came at each one it lacks, and works it
    out itself until they have: it never waits for a child still validating or drilling
    (here for a minute: the run ends long before, and the child is stopped)."""
    repo = rollouts(tmp_path / "repo", MIN_FILES // 3 + 10)
    done, report = run(repo, tmp_path / "slow", "-o", "json", CHILD=f"slow to {slow}")
    serial, serial_report = run(repo, tmp_path / "serial", "-o", "json", HEADWAY_CHECK_PREFETCH="0")
    assert isinstance(report["taken"], int) and report["taken"] > 0
    assert report["drilled"] is None  # never ready: never taken
    assert report["parent drills"] == serial_report["parent drills"] == 2
    if slow == "validate":
        assert report["validated"] is None
        assert report["parent validated"] == serial_report["parent validated"]
    else:
        assert isinstance(report["validated"], int) and report["validated"] > 0
    assert (done.stdout, done.returncode) == (serial.stdout, serial.returncode)
    started = report["started"]
    assert isinstance(started, dict)
    with pytest.raises(ProcessLookupError):
        os.kill(int(started["pid"]), 0)


def test_a_failing_child_leaves_the_parent_to_parse(large: Path, tmp_path: Path) -> None:
    failed, report = run(large, tmp_path / "failed", "-o", "json", CHILD="fails")
    serial, _ = run(large, tmp_path / "serial", "-o", "json", HEADWAY_CHECK_PREFETCH="0")
    assert report["started"] is not None
    assert report["taken"] == 0
    assert report["validated"] == 0
    assert (failed.stdout, failed.returncode) == (serial.stdout, serial.returncode)
    assert cached_parses(large, tmp_path / "failed") == cached_parses(large, tmp_path / "serial")


def test_a_child_whose_answer_is_not_taken_is_stopped(large: Path, tmp_path: Path) -> None:
    """A usage error found after the child started (a missing `--config` file): the parent
    ends, and so does the child."""
    done, report = run(
        large, tmp_path / "c", "--config", str(tmp_path / "missing.yaml"), CHILD="sleeps"
    )
    assert done.returncode == 2, done.stderr
    started = report["started"]
    assert isinstance(started, dict)
    assert report["taken"] is None
    with pytest.raises(ProcessLookupError):
        os.kill(int(started["pid"]), 0)


@pytest.mark.parametrize(
    ("case", "argv", "env"),
    [
        ("a warm cache", ["-o", "json"], {}),
        ("another thread", ["-o", "json"], {"THREAD": "1"}),
        ("switched off", ["-o", "json"], {"HEADWAY_CHECK_PREFETCH": "0"}),
        ("no cache", ["--no-cache", "-o", "json"], {}),
    ],
)
def test_no_child_where_it_is_not_sound_or_not_needed(
    large: Path, tmp_path: Path, case: str, argv: list[str], env: dict[str, str]
) -> None:
    cache = tmp_path / "cache"
    if case == "a warm cache":
        run(large, cache, "-o", "json", HEADWAY_CHECK_PREFETCH="0")
    done, report = run(large, cache, *argv, **env)
    assert done.returncode == 1, done.stderr
    assert {k: report[k] for k in NOT_STARTED} == NOT_STARTED


def test_no_child_for_a_small_repository(tmp_path: Path) -> None:
    small = repository(tmp_path / "small", 10)
    done, report = run(small, tmp_path / "cache", "-o", "json")
    assert done.returncode == 1
    assert {k: report[k] for k in NOT_STARTED} == NOT_STARTED
