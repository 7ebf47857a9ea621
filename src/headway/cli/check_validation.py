"""Validation of the documents `headway check` read, with what earlier runs said of the
documents whose file has not changed (`check_drill_cache`'s `valid` answers).

A document names itself across runs when the parse cache read it from a file it could keep
(`ParseCache.origin`: the hash of the file's bytes, its path, the document's index): the
same bytes at the same path give the same document, lines included, and validation reads
nothing but the document. So its diagnostics are kept under that name, and trusted while
the code that computed them is unchanged (the answers file records every loaded module).
Documents without a name (rendered by a tool, read from a file with a YAML error or with a
value the parse cache cannot store) are validated every run. The result is the list
`validate_documents` gives for the same documents, in the same order.
"""

from __future__ import annotations

from collections.abc import Sequence

from headway.cli.check_drill_cache import DrillAnswers
from headway.cli.check_parse_cache import ParseCache
from headway.model.diagnostics import Diagnostic
from headway.model.manifests import ParseMemo
from headway.model.validate import validate_documents
from headway.model.yamlload import Document

__all__ = ["validate_with_answers"]


def validate_with_answers(
    documents: Sequence[Document],
    *,
    parses: ParseMemo,
    parse_cache: ParseCache,
    answers: DrillAnswers,
) -> list[Diagnostic]:
    """`validate_documents(documents, memo=parses)`, each named document's part recalled
    from `answers` when kept there, and kept there when computed."""
    diagnostics: list[Diagnostic] = []
    for document in documents:
        origin = parse_cache.origin(document)
        kept = None if origin is None else answers.validation(origin)
        if kept is None:
            found = validate_documents([document], memo=parses)
            if origin is not None:
                answers.keep_validation(origin, found)
            diagnostics.extend(found)
        else:
            diagnostics.extend(kept)
    return diagnostics
