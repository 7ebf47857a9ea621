"""`load_documents` reports unreadable text on one line with its line number."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from headway.model.yamlload import load_documents, load_one


def test_a_control_character_is_one_line_at_its_line() -> None:
    result = load_documents("kind: ConfigMap\nmetadata:\n  name: \x14x\n", "cm.yaml")
    assert [(d.file, d.line, d.message) for d in result.diagnostics] == [
        ("cm.yaml", 3, "unacceptable character #x0014: control characters are not allowed")
    ]
    assert "<unicode string>" not in str(result.diagnostics[0])


# PyYAML's resolver takes these for a binary/hex number or a date, and its constructor then
# raises ValueError: before, that escaped every reader as a traceback (`headway validate`
# included). Go's YAML reader keeps them as the strings they look like.
UNBUILDABLE = ["0b_", "0x_", "2001-13-45", "2001-02-30", "2001-1-1 25:00:00"]


def test_a_scalar_pyyaml_cannot_build_is_the_string_it_looks_like() -> None:
    text = "kind: ConfigMap\ndata:\n" + "".join(f"  k{i}: {v}\n" for i, v in enumerate(UNBUILDABLE))
    result = load_documents(text, "cm.yaml")
    assert not result.diagnostics
    assert list(result.documents[0].obj["data"].values()) == UNBUILDABLE
    assert load_one("a: 0b_\nb: 0b101\n") == {"a": "0b_", "b": 5}  # real numbers stay numbers


def test_a_scalar_tagged_with_a_type_it_is_not_is_the_string_it_is() -> None:
    """PyYAML raised IndexError (`!!int ''`), KeyError (`!!bool maybe`) or AttributeError
    (`!!timestamp soon`) for these: a traceback from every reader."""
    text = "a: !!int\nb: !!float ''\nc: !!bool maybe\nd: !!timestamp soon\ne: !!int '7'\n"
    result = load_documents(text, "values.yaml")
    assert not result.diagnostics
    assert result.documents[0].obj == {"a": "", "b": "", "c": "maybe", "d": "soon", "e": 7}


def test_validate_reads_such_a_file_without_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "cm.yaml"
    path.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: 0b_\n")
    done = subprocess.run(
        [sys.executable, "-m", "headway", "validate", str(path)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 0, done.stdout + done.stderr
