"""`HEADWAY_YAML_RUST` and `HEADWAY_YAML_CROSSCHECK` set the YAML reader of a `headway`
process (cli/yaml_reader.py, read by the entry point)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from headway.cli import yaml_reader
from headway.model import yamlrust


@pytest.fixture
def reader_state(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Whatever a test switches is switched back (the suite compares the readers)."""
    for name in ("disabled", "compare", "report"):
        monkeypatch.setattr(yamlrust._READER, name, getattr(yamlrust._READER, name))
    yield


@pytest.mark.usefixtures("reader_state")
def test_rust_off_leaves_every_text_to_pyyaml() -> None:
    assert yamlrust.read_documents("a: 1\n") is not None
    yaml_reader.configure({"HEADWAY_YAML_RUST": "0"})
    assert yamlrust.read_documents("a: 1\n") is None


@pytest.mark.usefixtures("reader_state")
def test_crosscheck_reports_to_the_named_file(tmp_path: Path) -> None:
    yamlrust.compare_with_pyyaml(None, enabled=False)
    yaml_reader.configure({})
    assert not yamlrust.crosschecking()
    report = tmp_path / "report.txt"
    yaml_reader.configure({"HEADWAY_YAML_CROSSCHECK": str(report)})
    assert yamlrust.crosschecking()
    yamlrust.disagreement("a test's problem", "a: 1\n")
    assert "a test's problem" in report.read_text()


def test_a_headway_process_reads_its_switches(tmp_path: Path) -> None:
    """The entry point configures the reader before any command runs: with the comparison
    on and reporting to a file, a `validate` that reads manifests through yaml_rs runs clean
    and reports nothing; with yaml_rs off, it reads them all the same."""
    manifest = tmp_path / "cm.yaml"
    manifest.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: b}\n")
    report = tmp_path / "report.txt"
    for rust in ("1", "0"):
        env = {**os.environ, "HEADWAY_YAML_CROSSCHECK": str(report), "HEADWAY_YAML_RUST": rust}
        done = subprocess.run(
            [sys.executable, "-m", "headway", "validate", str(manifest)],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        assert done.returncode == 0, done.stderr
    assert not report.exists()
