"""What the system refuses and what the terminal cannot print end in one clear line, not a
traceback: a path whose name is too long (a component past NAME_MAX, a path past PATH_MAX)
for `validate`, `check` and `apply`, and a manifest or a file named in any language printed
to a stream that encodes ASCII only (`PYTHONIOENCODING=ascii`, as a bare `LANG=C` CI image
has it): characters it cannot encode are written as escapes (`caf\\xe9`), nothing is lost.
Each through `python -m headway` in a new process, as a user runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROLLOUT = """\
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: café
spec:
  strategy:
    canary:
      steps:
      - pause: {duration: 1ü}
"""


def headway(cwd: Path, *argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "headway", *argv],
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="strict",
        cwd=cwd,
        env={**os.environ, **env},
        timeout=120,
        check=False,
    )


LONG_NAME = "a" * 300  # one component past NAME_MAX (255)
LONG_PATH = "b/" * 2500 + "x.yaml"  # past PATH_MAX (4096)


@pytest.mark.parametrize("path", [f"{LONG_NAME}/x.yaml", LONG_PATH], ids=["name", "path"])
@pytest.mark.parametrize(
    "argv", [["validate"], ["validate", "-o", "json"], ["check"], ["apply", "-f"]]
)
def test_a_path_the_system_refuses_is_one_line_and_status_2(
    tmp_path: Path, argv: list[str], path: str
) -> None:
    done = headway(tmp_path, *argv, path)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "too long" in done.stderr
    assert done.stderr.count("\n") == 1  # one line (it names the path)


@pytest.mark.parametrize("name", ["r.yaml", "résumé.yaml"])
def test_validate_escapes_what_an_ascii_terminal_cannot_print(tmp_path: Path, name: str) -> None:
    (tmp_path / name).write_text(ROLLOUT, encoding="utf-8")
    done = headway(tmp_path, "validate", name, PYTHONIOENCODING="ascii")
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 1  # the manifest's errors, reported
    shown = name.replace("é", "\\xe9")
    assert f"{shown}:9: Rollout/caf\\xe9: spec.strategy.canary.steps[0].pause.duration" in (
        done.stdout
    )
    assert '"1\\xfc" is not a duration' in done.stdout
    utf8 = headway(tmp_path, "validate", name, PYTHONIOENCODING="utf-8")
    assert utf8.stdout == done.stdout.replace("\\xe9", "é").replace("\\xfc", "ü")


def test_check_escapes_what_an_ascii_terminal_cannot_print(tmp_path: Path) -> None:
    (tmp_path / "apps").mkdir()
    (tmp_path / "apps" / "résumé.yaml").write_text(ROLLOUT, encoding="utf-8")
    done = headway(tmp_path, "check", ".", PYTHONIOENCODING="ascii")
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 1
    assert "apps/r\\xe9sum\\xe9.yaml" in done.stdout and '"1\\xfc"' in done.stdout
