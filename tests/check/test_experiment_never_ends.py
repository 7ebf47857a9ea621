"""HW217: an experiment step ends by itself only with a duration or an analysis marked
requiredForCompletion (Argo's Experiment otherwise runs until terminated)."""

from __future__ import annotations

from pathlib import Path

import pytest

from check.conftest import FIXTURES, CheckDir

FOUND = FIXTURES / "HW217-experiment-never-ends" / "found" / "rollout.yaml"


def _findings(tmp_path: Path, check_dir: CheckDir, text: str) -> list[str]:
    (tmp_path / "rollout.yaml").write_text(text)
    return [f"{f.file}:{f.line}" for f in check_dir(tmp_path) if f.rule == "HW217"]


def test_the_finding_names_the_file_and_the_line_of_the_experiment(
    tmp_path: Path, check_dir: CheckDir
) -> None:
    text = FOUND.read_text()
    line = text.splitlines().index("        - experiment:") + 1
    assert _findings(tmp_path, check_dir, text) == [f"rollout.yaml:{line}"]


@pytest.mark.parametrize(
    ("edit", "reported"),
    [
        (("        - experiment:\n", "        - experiment:\n            duration: 10m\n"), False),
        (("templateName: compare-latency\n",
          "templateName: compare-latency\n                requiredForCompletion: false\n"), True),
        (("            analyses:\n              - name: compare\n"
          "                templateName: compare-latency\n", ""), True),
    ],
)
def test_a_duration_ends_it_and_an_analysis_only_when_required_for_completion(
    tmp_path: Path, check_dir: CheckDir, edit: tuple[str, str], reported: bool
) -> None:
    text = FOUND.read_text()
    assert edit[0] in text
    assert bool(_findings(tmp_path, check_dir, text.replace(*edit))) is reported
