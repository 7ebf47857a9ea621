"""Reading a changed manifest file again without parsing the documents the change left alone.

A commit that changes one of a file's twenty documents used to make the whole file be parsed
again. A stream splits textually into pieces at its document starts (`yamlsplit`), and a
piece's documents (the first piece holds zero or one, each later piece exactly one) depend on
its text alone.

`EarlierParses` keeps, per file name, the last text read and its documents. When the file is
read again with other text, each piece whose text is the same as a piece of the earlier text
takes that piece's documents, with their lines moved by the piece's new position; the pieces
left are parsed, each run of neighbours in one pass. Anything unusual reads the whole file:
text this splitting does not cover (a directive line starting with `%`, a line break other
than LF and CRLF, a byte-order mark past the first character), a run whose document count
does not fit its pieces, and any error or non-plain document (the caller then reads the
whole file its own way and reports its errors, as before). Anchors cannot reach across
documents; non-plain documents are not read here at all.

Reused objects are the earlier read's objects, not copies: their readers (the render cache)
treat rendered objects as read-only already.

Below the document: a changed piece whose document was itself read because it changed (so
its scalar lines were recorded, `yamlpatch.read_recording`) and whose new text differs only
in those scalars is patched instead of parsed (`yamlpatch.patched`): the typical commit that
bumps an image tag reads one value, not the Deployment around it. Pieces are paired by
position, so only when the file has as many pieces as before.

A read that split its text keeps the pieces and each piece's documents (`_Read.pieces`), so
the next changed read does not split the earlier text again.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from headway.model import yamlpatch
from headway.model.yamlpatch import ScalarLines
from headway.model.yamlsplit import document_pieces

__all__ = ["EarlierParses", "ParsedDocument", "StreamReader"]

# (object, 1-based line of its root); empty documents are (None, line).
ParsedDocument = tuple[Any, int]
# Reads a whole stream's documents; raises on anything it will not read.
StreamReader = Callable[[str], list[ParsedDocument]]
# The same, recording each document's scalar lines (`yamlpatch.read_recording`).
RecordingReader = Callable[[str], list[tuple[Any, int, ScalarLines]]]
# What a plain scalar's text reads as (`yamlfast.PlainScalars.value`).
PlainValue = Callable[[str], Any]
Records = tuple["ScalarLines | None", ...]
# A document of a piece: its object, its root's line counted from the piece's first line,
# and its scalar lines (None where its read did not record them).
_Piece = tuple[Any, int, "ScalarLines | None"]
# A text's pieces -> their documents, and its pieces in order.
_Pieces = tuple[dict[str, tuple[_Piece, ...]], list[str]]


@dataclass(frozen=True)
class _Read:
    """A file's text as last read, and its documents' objects and lines (apart: a tuple
    of ints is one the garbage collector stops tracking, a tuple per document is not)."""

    text: str
    objects: tuple[Any, ...]
    lines: tuple[int, ...]
    # Each document's scalar lines, where its read recorded them (`yamlpatch`).
    records: Records
    # Each piece of the text -> its documents, and the pieces in order, when the read split
    # the text (`_reusing`); else the next changed read splits it (`_documents_by_piece`).
    pieces: _Pieces | None = None

    @classmethod
    def of(
        cls,
        text: str,
        documents: list[ParsedDocument],
        records: Records = (),
        pieces: _Pieces | None = None,
    ) -> _Read:
        objects = tuple(obj for obj, _ in documents)
        kept = records if len(records) == len(objects) else (None,) * len(objects)
        return cls(text, objects, tuple(at for _, at in documents), kept, pieces)

    @property
    def size(self) -> int:
        """The characters it keeps: its text, and its pieces' as many again."""
        return len(self.text) * (1 if self.pieces is None else 2)


class EarlierParses:
    """The last read of each file name (at most `max_files`, and `max_chars` of text in
    all, least recently read dropped first), for `read` to take unchanged pieces from."""

    def __init__(self, *, max_files: int = 4096, max_chars: int = 32_000_000) -> None:
        self._max_files = max_files
        self._max_chars = max_chars
        self._reads: OrderedDict[str, _Read] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()
        self.reused = 0  # documents taken from an earlier read (for tests and benchmarks)
        self.patched = 0  # changed documents patched instead of parsed (`yamlpatch`)

    def read(
        self,
        text: str,
        file: str,
        read_stream: StreamReader,
        *,
        recording: tuple[RecordingReader, PlainValue] | None = None,
    ) -> list[ParsedDocument]:
        """`read_stream(text)`, taking each piece `file`'s earlier text also held from that
        read; what `read_stream` raises is raised (and nothing is remembered). With
        `recording` (a reader that records scalar lines, and the plain scalars' reader),
        changed pieces are read recording, and patched when they can be."""
        with self._lock:
            earlier = self._reads.get(file)
        documents = None
        records: Records = ()
        pieces: _Pieces | None = None
        if earlier is not None and earlier.text == text:
            documents = list(zip(earlier.objects, earlier.lines, strict=True))
            records, pieces = earlier.records, earlier.pieces
        elif earlier is not None:
            found = self._reusing(earlier, text, read_stream, recording)
            if found is not None:
                documents, records, pieces = found
        if documents is None:
            documents = read_stream(text)
        self._remember(file, _Read.of(text, documents, records, pieces))
        return documents

    def _reusing(
        self,
        earlier: _Read,
        text: str,
        read_stream: StreamReader,
        recording: tuple[RecordingReader, PlainValue] | None,
    ) -> tuple[list[ParsedDocument], Records, _Pieces] | None:
        """`text`'s documents (and their scalar lines, and its pieces' documents) from
        `earlier`'s pieces, patches and parses of the rest, or None when the pieces do not
        fit (the caller then parses the whole text)."""
        split = earlier.pieces if earlier.pieces is not None else _documents_by_piece(earlier)
        pieces = document_pieces(text)
        if split is None or pieces is None:
            return None
        known, earlier_pieces = split
        beside = earlier_pieces if len(earlier_pieces) == len(pieces) else None
        out = _Out()
        run = _Run(recording[0] if recording is not None else None)
        line = 0  # lines before the piece
        for index, piece in enumerate(pieces):
            found = known.get(piece)
            patched = False
            if found is None and beside is not None and recording is not None:
                found = self._patched(known.get(beside[index]), beside[index], piece, recording)
                patched = found is not None
            if found is None:
                run.add(piece, first=index == 0, line=line)
            elif not run.read(read_stream, into=out):
                return None
            elif index > 0 and len(found) != 1:
                # A piece holds the same documents wherever it stands, but a first piece
                # (the text before any `---`) reads as one only there.
                return None
            else:
                out.add(piece, found, line)
                if patched:
                    self.patched += 1
                else:
                    self.reused += len(found)
            line += piece.count("\n")
        if not run.read(read_stream, into=out):
            return None
        return out.documents, tuple(out.records), (out.known, pieces)

    def _patched(
        self,
        earlier: tuple[_Piece, ...] | None,
        before: str,
        piece: str,
        recording: tuple[RecordingReader, PlainValue],
    ) -> tuple[_Piece, ...] | None:
        """`piece` as the one document of the earlier piece `before` patched, if it can be
        (`yamlpatch.patched`)."""
        if earlier is None or len(earlier) != 1 or earlier[0][2] is None:
            return None
        obj, at, lines = earlier[0]
        assert lines is not None
        done = yamlpatch.patched(before, piece, obj, lines, recording[1])
        return None if done is None else ((done[0], at, done[1]),)

    def clear(self) -> None:
        with self._lock:
            self._reads.clear()
            self._chars = 0

    def _remember(self, file: str, read: _Read) -> None:
        with self._lock:
            old = self._reads.pop(file, None)
            if old is not None:
                self._chars -= old.size
            self._reads[file] = read
            self._chars += read.size
            while self._reads and (
                len(self._reads) > self._max_files or self._chars > self._max_chars
            ):
                _name, dropped = self._reads.popitem(last=False)
                self._chars -= dropped.size


def _documents_by_piece(earlier: _Read) -> _Pieces | None:
    """Each piece of `earlier`'s text -> its documents, and the pieces in order; None when
    its pieces and documents do not pair up (each piece after the first holds one
    document, the first holds what is left: zero or one)."""
    all_pieces = document_pieces(earlier.text)
    if all_pieces is None:
        return None
    pieces = all_pieces
    first = len(earlier.objects) - (len(pieces) - 1)
    if first not in (0, 1):
        return None
    known: dict[str, tuple[_Piece, ...]] = {}
    line = 0
    if first == 0:  # a first piece of comments, or empty: no document
        known[pieces[0]] = ()
        line = pieces[0].count("\n")
        pieces = pieces[1:]
    for piece, obj, at, lines in zip(
        pieces, earlier.objects, earlier.lines, earlier.records, strict=True
    ):
        known[piece] = ((obj, at - line, lines),)
        line += piece.count("\n")
    return known, all_pieces


class _Out:
    """Documents read so far, with their scalar lines, and each piece's documents."""

    def __init__(self) -> None:
        self.documents: list[ParsedDocument] = []
        self.records: list[ScalarLines | None] = []
        self.known: dict[str, tuple[_Piece, ...]] = {}

    def add(self, piece: str, found: tuple[_Piece, ...], line: int) -> None:
        """`piece`'s documents `found` (lines counted from the piece's first line); the
        piece starts after `line` lines of the text."""
        for obj, at, lines in found:
            self.documents.append((obj, line + at))
            self.records.append(lines)
        self.known[piece] = found


class _Run:
    """Neighbouring pieces to parse in one pass (recording their scalar lines when given a
    reader that does)."""

    def __init__(self, recording: RecordingReader | None = None) -> None:
        self._recording = recording
        self._pieces: list[tuple[str, int]] = []  # each with the lines before it
        self._first = False  # whether it starts with the text's first piece

    def add(self, piece: str, *, first: bool, line: int) -> None:
        if not self._pieces:
            self._first = first
        self._pieces.append((piece, line))

    def read(self, read_stream: StreamReader, *, into: _Out) -> bool:
        """Parse the pieces gathered (if any) and add their documents, lines moved to the
        whole text's, then start over; False when the documents read do not fit the
        pieces (a first piece holds zero or one, every other piece one)."""
        if not self._pieces:
            return True
        pieces, self._pieces = self._pieces, []
        count = len(pieces)
        text = "".join(piece for piece, _ in pieces)
        read: list[_Piece]
        if self._recording is None:
            read = [(obj, at, None) for obj, at in read_stream(text)]
        else:
            read = [(obj, at, lines) for obj, at, lines in self._recording(text)]
        if len(read) != count and not (self._first and len(read) == count - 1):
            return False
        run_line = pieces[0][1]  # lines before the run
        if len(read) < count:  # the first piece held no document
            into.add(pieces[0][0], (), run_line)
            pieces = pieces[1:]
        for (piece, line), (obj, at, lines) in zip(pieces, read, strict=True):
            start = line - run_line  # the piece's first line in `text`
            into.add(piece, ((obj, at - start, _from(lines, start)),), line)
        return True


def _from(lines: ScalarLines | None, start: int) -> ScalarLines | None:
    """`lines` numbered from line `start` of the text they were read in."""
    if lines is None:
        return None
    return {line - start: found for line, found in lines.items()} if start else lines
