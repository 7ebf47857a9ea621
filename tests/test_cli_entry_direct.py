"""The entry point's direct path (`cli/entry.py`) answers exactly as the Typer app does.

Differential: a corpus of command lines (plain `validate PATH...` lines the direct path takes,
with and without a format option in each of Click's spellings, and the neighbours it must
leave to Typer: other options, a second or refused format, `--`, `-`, an empty word, no path,
missing paths, a file named with a trailing slash, typos, `--version` with more) is run through
`entry.main()` and through the Typer app of `cli.main`, each mode in a fresh interpreter,
plain at one width and with forced colour at another. Output, errors and exit status must be
the same byte for byte. Another test shows the direct path was really taken.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from headway.cli import entry
from import_probe import run_headway, run_python

REPO = Path(__file__).resolve().parent.parent

_RENDER = """
import contextlib, io, json, os, sys
mode, lines = sys.argv[1], json.load(sys.stdin)
if mode == "typer":
    from headway.cli.main import main as run
else:
    from headway.cli.entry import main as run
rendered = []
for line in lines:
    out, err, code = io.StringIO(), io.StringIO(), 0
    sys.argv = ["headway", *line]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            run()
        except SystemExit as exit:
            code = exit.code
    rendered.append({"line": line, "code": code, "out": out.getvalue(), "err": err.getvalue()})
print(json.dumps(rendered))
"""

_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: "web:1"}]
"""
_BAD_ROLLOUT = """\
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: web
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: "web:1"}]
  strategy:
    canary:
      steps: [{setWeight: 120}, {pause: {duration: 1mm}}]
"""


def _repository(root: Path) -> None:
    (root / "good.yaml").write_text(_DEPLOYMENT)
    (root / "bad.yaml").write_text(_BAD_ROLLOUT)
    (root / "with space.yaml").write_text(_DEPLOYMENT.replace("web", "web-2"))
    (root / "nested" / "deeper").mkdir(parents=True)
    (root / "nested" / "deeper" / "r.yml").write_text(_BAD_ROLLOUT.replace("120", "30"))
    (root / "empty").mkdir()
    (root / "notes.txt").write_text("not a manifest\n")
    (root / "-dash.yaml").write_text(_DEPLOYMENT)


# Lines the direct path takes (every word a path that is there) ...
DIRECT = [
    ["validate", str(REPO / "examples")],
    ["validate", "good.yaml"],
    ["validate", "bad.yaml"],
    ["validate", "good.yaml", "bad.yaml", "good.yaml"],
    ["validate", "with space.yaml", "nested"],
    ["validate", "./nested//deeper/"],
    ["validate", "."],
    ["validate", "empty"],
    ["validate", "notes.txt"],
    ["validate", "-o", "json", "bad.yaml"],
    ["validate", "bad.yaml", "--format", "json", "nested"],
    ["validate", "--format=text", "bad.yaml"],
    ["validate", "-ojson", "good.yaml", "bad.yaml"],
    ["validate", "--format", "text", "good.yaml"],
    ["--version"],
]
# ... and their neighbours, which Typer answers.
TO_TYPER = [
    ["validate"],
    ["validate", "missing.yaml"],
    ["validate", "good.yaml", "missing.yaml"],
    ["validate", "good.yaml/"],
    ["validate", ""],
    ["validate", "-"],
    ["validate", "--"],
    ["validate", "--", "good.yaml"],
    ["validate", "-dash.yaml"],
    ["validate", "--", "-dash.yaml"],
    ["validate", "--format", "yaml", "good.yaml"],
    ["validate", "-o", "json", "-o", "text", "bad.yaml"],
    ["validate", "-o", "json", "--format=json", "bad.yaml"],
    ["validate", "bad.yaml", "-o"],
    ["validate", "-o", "JSON", "bad.yaml"],
    ["validate", "-o=json", "bad.yaml"],
    ["validate", "--format=", "bad.yaml"],
    ["validate", "-o", "json"],
    ["validate", "-o", "json", "missing.yaml"],
    ["validate", "--formats", "json", "bad.yaml"],
    ["validate", "--fo", "json", "bad.yaml"],
    ["validate", "-oj", "bad.yaml"],
    ["validate", "-o", "json", "--", "bad.yaml"],
    ["validate", "--plugins-dir", "empty", "good.yaml"],
    ["validate", "bad.yaml", "--help"],
    ["validate", "--no-such-option", "good.yaml"],
    ["validate", "-5"],
    ["validat", "good.yaml"],
    ["Validate", "good.yaml"],
    ["--version", "validate"],
    ["--version", "--no-such-option"],
    [],
]


def _render(mode: str, cwd: Path, env: dict[str, str]) -> list[dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-c", _RENDER, mode],
        input=json.dumps(DIRECT + TO_TYPER),
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        env={**os.environ, **env},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    rendered: list[dict[str, Any]] = json.loads(done.stdout)
    return rendered


@pytest.mark.parametrize(
    "env",
    [{"COLUMNS": "100"}, {"COLUMNS": "72", "FORCE_COLOR": "1"}],
    ids=["plain-100", "colour-72"],
)
def test_every_line_reads_as_the_typer_app_answers_it(tmp_path: Path, env: dict[str, str]) -> None:
    _repository(tmp_path)
    typer_app = _render("typer", tmp_path, env)
    direct = _render("entry", tmp_path, env)
    for before, after in zip(typer_app, direct, strict=True):
        assert after == before, " ".join(before["line"])
    by_line = {" ".join(r["line"]): r for r in typer_app}  # the corpus compares real answers
    assert (
        "Rollout/web: spec.strategy.canary.steps[0].setWeight"
        in by_line["validate bad.yaml"]["out"]
    )
    assert by_line["validate bad.yaml"]["code"] == 1
    assert by_line["validate good.yaml"]["code"] == 0
    assert "no such file" in by_line["validate good.yaml missing.yaml"]["err"]
    assert "No such option" in by_line["validate --no-such-option good.yaml"]["err"]
    assert by_line["validate -o json bad.yaml"]["out"].startswith("[")
    assert by_line["--version"]["out"].startswith("headway ")


def test_the_direct_path_takes_the_plain_lines_and_no_other(tmp_path: Path) -> None:
    """Which lines go direct: without this, the comparison above could pass with every line
    sent to Typer."""
    _repository(tmp_path)
    cwd = Path.cwd()
    os.chdir(tmp_path)
    try:
        plain = [line for line in DIRECT if line[:1] == ["validate"]]
        assert all(entry.plain_validate(line[1:]) is not None for line in plain)
        assert [line for line in TO_TYPER if _goes_direct(line)] == []
    finally:
        os.chdir(cwd)


def _goes_direct(line: list[str]) -> bool:
    if line == ["--version"]:
        return True
    return line[:1] == ["validate"] and entry.plain_validate(line[1:]) is not None


def test_a_validate_or_version_line_imports_no_typer(tmp_path: Path) -> None:
    _repository(tmp_path)
    for line in (["validate", str(tmp_path / "bad.yaml")], ["--version"]):
        run = run_headway(*line)
        assert run.code == (1 if line[0] == "validate" else 0), run.output
        assert run.loaded(["typer", "typer.", "click"]) == [], line


def test_an_unreadable_path_is_left_to_typer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Typer's `click.Path(readable=True)` refuses it with its own error (a test run as root
    reads everything, so the check is made to say no)."""
    (tmp_path / "good.yaml").write_text(_DEPLOYMENT)
    assert entry.plain_paths([str(tmp_path / "good.yaml")]) == [tmp_path / "good.yaml"]
    monkeypatch.setattr(os, "access", lambda path, mode: False)
    assert entry.plain_paths([str(tmp_path / "good.yaml")]) is None


def test_a_shell_completion_request_is_left_to_typer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "good.yaml").write_text(_DEPLOYMENT)
    monkeypatch.setenv("_HEADWAY_COMPLETE", "bash_complete")
    assert entry.direct_status(["validate", str(tmp_path / "good.yaml")]) is None
    assert entry.direct_status(["--version"]) is None


@pytest.mark.parametrize(
    "line",
    [
        ["validate", str(REPO / "examples")],
        ["validate", "-ojson", str(REPO / "examples")],
        ["--version"],
    ],
    ids=" ".join,
)
@pytest.mark.parametrize("mode", ["typer", "entry"])
def test_a_closed_output_pipe_ends_as_typer_ends_it(mode: str, line: list[str]) -> None:
    """`headway ... | head -0`: status 1 and nothing on standard error, both ways."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first line is written
    source = (
        "import sys\n"
        + ("from headway.cli.main import main\n" if mode == "typer" else "")
        + ("from headway.cli.entry import main\n" if mode == "entry" else "")
        + f"sys.argv = ['headway', *{line!r}]\n"
        + "main()\n"
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", source],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        os.close(write_end)
    assert (done.returncode, done.stderr) == (1, "")


@pytest.mark.parametrize(
    "line",
    [
        ["--version"],
        ["validate", str(REPO / "examples")],
        ["validate", "-o", "json", str(REPO / "examples")],
    ],
    ids=" ".join,
)
def test_a_line_run_with_its_output_closed_ends_as_typer_ends_it(line: list[str]) -> None:
    """`headway --version >&-` (Python then has no `sys.stdout`): Typer's echo prints
    nothing and the status stays (0 for the version); the direct path raised AttributeError
    with a traceback and status 1."""
    answers = {}
    for mode in ("main", "entry"):
        source = (
            f"import sys\nfrom headway.cli.{mode} import main\n"
            f"sys.argv = ['headway', *{line!r}]\nmain()\n"
        )
        answers[mode] = subprocess.run(
            ["/bin/sh", "-c", '"$@" >&-', "sh", sys.executable, "-c", source],
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            check=False,
        )
    typer_app, direct = answers["main"], answers["entry"]
    assert typer_app.stderr == ""
    assert (direct.returncode, direct.stderr) == (typer_app.returncode, typer_app.stderr)


_REDACTION_PROBE = """
import logging, sys
from headway.cli import entry
sys.argv = ["headway", *sys.argv[1:]]
report = {"code": 0}
try:
    entry.main()
except SystemExit as exit:
    report["code"] = exit.code
report["redacts"] = getattr(logging.getLogRecordFactory(), "headway_redacts", False)
"""


def test_a_direct_validate_runs_with_log_redaction_installed(tmp_path: Path) -> None:
    """As every command the Typer app loads: no log line of it shows a URL's credentials."""
    (tmp_path / "good.yaml").write_text(_DEPLOYMENT)
    run = run_python(_REDACTION_PROBE, "validate", str(tmp_path / "good.yaml"))
    assert run.code == 0, run.output
    assert run.loaded(["typer"]) == []  # it did go direct
    assert run.report["redacts"] is True
