"""`HEADWAY_YAML_RUST` and `HEADWAY_YAML_CROSSCHECK` set the YAML reader of a `headway`
process (cli/yaml_reader.py, read by the entry point)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from headway.cli import entry, yaml_reader
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


@pytest.mark.usefixtures("reader_state")
def test_the_entry_point_sets_the_switches_before_any_command(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`headway` (cli/entry.py `main`) reads the variables before running a command: after
    `headway --version` with them set, yaml_rs is off and the comparison reports to the
    named file."""
    yamlrust.compare_with_pyyaml(None, enabled=False)
    report = tmp_path / "report.txt"
    monkeypatch.setenv("HEADWAY_YAML_RUST", "0")
    monkeypatch.setenv("HEADWAY_YAML_CROSSCHECK", str(report))
    monkeypatch.setattr(sys, "argv", ["headway", "--version"])
    with pytest.raises(SystemExit) as done:
        entry.main()
    assert done.value.code in (0, None)
    assert yamlrust.read_documents("a: 1\n") is None
    assert yamlrust.crosschecking()
    yamlrust.disagreement("from the entry point", "a: 1\n")
    assert "from the entry point" in report.read_text()
