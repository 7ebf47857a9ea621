"""Small helpers for model tests: load one document from text, render diagnostics."""

from __future__ import annotations

import textwrap
from collections.abc import Iterable

from headway.model.diagnostics import Diagnostic
from headway.model.yamlload import Document, load_documents


def document(text: str, file: str = "m.yaml") -> Document:
    loaded = load_documents(textwrap.dedent(text), file)
    assert not loaded.diagnostics, loaded.diagnostics
    assert len(loaded.documents) == 1
    return loaded.documents[0]


def rendered(diagnostics: Iterable[Diagnostic]) -> list[str]:
    return [str(d) for d in diagnostics]
