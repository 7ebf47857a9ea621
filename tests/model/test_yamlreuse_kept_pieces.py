"""A changed read keeps its text's pieces and their documents (`yamlreuse._Read.pieces`) so
that the next changed read need not split the text again: what it keeps must be what
splitting the text would give (`_documents_by_piece`), over every YAML file of the
repository read with edits that reuse, patch and parse pieces (a first piece of comments
alone, runs of changed neighbours, documents added and removed)."""

from __future__ import annotations

import random
from pathlib import Path

import yaml

from headway.model import yamlload, yamlreuse
from headway.model.yamlfast import NotPlain

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted(
    p for d in ("examples", "tests") for p in (ROOT / d).rglob("*") if p.suffix in (".yaml", ".yml")
)


def _variants(text: str, rnd: random.Random) -> list[str]:
    pieces = text.split("\n---")
    out = []
    for _ in range(4):
        edited = list(pieces)
        at = rnd.randrange(len(edited))
        edited[at] = edited[at].replace(": ", ": x", 1) if rnd.random() < 0.7 else edited[at]
        if rnd.random() < 0.3:
            edited.insert(rnd.randrange(len(edited) + 1), "\nkind: Added\nv: 1\n")
        if rnd.random() < 0.3 and len(edited) > 1:
            del edited[rnd.randrange(1, len(edited))]
        out.append("\n---".join(edited))
    return [("# a comment\n" if rnd.random() < 0.3 else "") + v for v in out]


def test_kept_pieces_are_the_split_of_the_text() -> None:
    rnd = random.Random(5)
    parses = yamlreuse.EarlierParses()
    kept = 0
    for path in FILES:
        text = path.read_text(encoding="utf-8", errors="replace")
        file = str(path)
        for later in [text, *_variants(text, rnd)]:
            try:
                parses.read(later, file, yamlload._read_plain, recording=yamlload._RECORDING)
            except (NotPlain, yaml.YAMLError):  # read some other way: nothing kept
                continue
            read = parses._reads[file]
            if read.pieces is not None:
                assert read.pieces == yamlreuse._documents_by_piece(read), (file, later)
                kept += 1
    assert kept > 300
