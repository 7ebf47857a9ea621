"""`load_documents` reports unreadable text on one line with its line number."""

from __future__ import annotations

from headway.model.yamlload import load_documents


def test_a_control_character_is_one_line_at_its_line() -> None:
    result = load_documents("kind: ConfigMap\nmetadata:\n  name: \x14x\n", "cm.yaml")
    assert [(d.file, d.line, d.message) for d in result.diagnostics] == [
        ("cm.yaml", 3, "unacceptable character #x0014: control characters are not allowed")
    ]
    assert "<unicode string>" not in str(result.diagnostics[0])
