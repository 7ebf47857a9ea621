"""A first `headway check` parses, validates and drills on a second core while the first starts.

With an empty cache of parsed files (`check_parse_cache`: a pre-commit hook's first run, a
new Headway version, a fresh CI machine) the command parses every manifest file, and before
it can start it imports the loader and the rules. Here the `headway` program forks once, as
soon as it knows the files: the child parses the second half of them, in the files'
order, while the parent imports, reads the config and then parses the first half; when the
parent's loader first asks for a file of the child's share, it takes everything the child
parsed (the cache's own entries: marshalled documents, by the SHA-256 of the bytes they were
read from) and goes on as a run with a warm cache does. On 1,000 Applications on 2 cores the
parent reached the child's files 0.3-0.5 s into the run and waited 12-90 ms there, instead
of parsing 2,500 files itself (docs/performance.md; bench/bench_check.py's first-run row
went from 1.35x to 1.29x and 1.28x of its yardstick, on a noisy machine).

The child then validates the documents it parsed (`validate_documents`, one at a time, as
`check_validation` does) while the parent renders its Applications, and sends the answers
as the drill cache keeps them (by each document's origin: its file's hash, path and index).
The parent takes them once they are ready (`Prefetch.ready`, asked at each document it has
no answer for; until then it validates the document itself): it validates only its own
half (about 90 ms of 190 at 1,000 Applications). The child's parse entries go out from a
thread while it validates, so that a full pipe does not hold the validation back until the
parent reads.

Last, the child drills the canary Rollouts of its half whose templates are beside them (in
the same directory; a ClusterAnalysisTemplate anywhere in its half), as the check's drill
gate does (`check_drill.drill_gate`, with the config's drill settings), and sends the
verdicts and plans' numbers as the drill cache keeps them: by the Rollout's and templates'
content and the settings. The parent takes them once they are ready, asked at each miss of
its drill gate: guesses the parent never asks for must not hold it back, so it never waits
for them, and drills itself what it needs before they come.
Which templates a Rollout's Application resolves is only known once it renders; the child
guesses, and a wrong guess is a key the parent never asks for. At 1,000 Applications laid
out so (a directory per service) the parent's drill gate went from 220 ms to 60 ms: it
loads neither numpy nor the replay, and plans only its own half.

What the child parsed is keyed by content, so it is right for whatever the parent reads,
and a file changed in between is just a miss; validation reads nothing but the document, so
an answer by origin is the parent's own; a drill answer is the drill's for its key. Each
kind of answer travels as one length-prefixed message: anything that goes wrong in the child
(an error, a signal, a message cut short or that does not unmarshal) leaves the parent
without that message and the ones after it, and it parses, validates or drills those
itself, as without the child. The child writes nothing but its answers (its standard
streams are /dev/null, it leaves by `os._exit`: no buffered output is written twice and no
`atexit` callback runs), and a child whose answers are not all taken is killed when the
command ends.

It runs only where forking is sound and worth it: in the `headway` program (not in a
caller's process, which may hold threads), with one thread, on a platform with `fork` other
than macOS, with an empty cache, reading the working tree (not `--revision`), and with at
least `MIN_FILES` manifest files. `HEADWAY_CHECK_PREFETCH=0` turns it off.
"""

from __future__ import annotations

import atexit
import contextlib
import marshal
import os
import select
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, NoReturn

from headway.cli.check_tree import ReadOnceTree, manifest_files

if TYPE_CHECKING:
    from headway.check.drill_engine import DrillSettings
    from headway.cli.check_drill_cache import DrillAnswers
    from headway.cli.check_parse_cache import ParseCache
    from headway.model.manifests import ParseMemo
    from headway.model.yamlload import Document

__all__ = ["MIN_FILES", "Prefetch", "prefetch_parses"]

# Fewer files than this are parsed in one process. Measured: the fork costs the parent about
# 0.6 ms and each file parsed elsewhere saves about 0.05 ms, so the child would pay off from
# a few dozen files; below 200 it saves a few milliseconds, not worth a second process.
MIN_FILES = 200


class Prefetch:
    """A child parsing `paths`, then (when it `validates`) validating what it parsed, then
    (when it `drills`) drilling what it can of its Rollouts: `take()` returns its parse
    entries, `take_validation()` its validation answers and `take_drills()` its drill
    answers, each waiting until the child sent it; `ready()` says whether an answer can be
    taken without waiting."""

    def __init__(
        self,
        pid: int,
        answer: int,
        paths: frozenset[str],
        *,
        validates: bool,
        drills: bool = False,
    ) -> None:
        self.pid = pid
        self.paths = paths
        self.validates = validates
        self.drills = drills  # (only after validating: the answers come in this order)
        # Unbuffered: whether the next message has begun to arrive is asked of the pipe
        # itself (`ready`), which a buffer could hold back.
        self._pipe: BinaryIO | None = os.fdopen(answer, "rb", buffering=0)
        self._expected = 1 + self.validates + self.drills
        self._received: list[object] = []
        atexit.register(self.abandon)

    def take(self) -> dict[str, bytes]:
        """The child's parse entries; empty when it failed. Waits for them."""
        entries = self._message(0)
        if not isinstance(entries, dict):
            return {}
        return {k: v for k, v in entries.items() if type(k) is str and type(v) is bytes}

    def take_validation(self) -> object:
        """The child's validation answers, as `DrillAnswers.to_lend` gives them (its `lend`
        checks them); None when it failed or was not asked to. Waits for them: ask
        `ready("validation")` first not to."""
        return self._message(1) if self.validates else None

    def take_drills(self) -> object:
        """The child's drill answers (verdicts and plans' numbers), as `take_validation`
        gives its own."""
        return self._message(2) if self.drills else None

    def ready(self, kind: str) -> bool:
        """Whether the answers of `kind` ("validation" or "drills") can be taken without
        waiting: they came, or began to come (the child writes a message whole, once it is
        made), or nothing more will. The parent asks at each answer it lacks, and works it
        out itself until they are ready: a child that is slow, or busy with guesses the
        parent never asks for (the drill's), never holds the parent back."""
        index = 1 if kind == "validation" else 2
        while len(self._received) <= index and self._pipe is not None:
            readable, _, _ = select.select([self._pipe], [], [], 0)
            if not readable:
                return False
            self._message(len(self._received))
        return True

    def _message(self, index: int) -> object:
        """The child's message `index`, None when it never came whole; the messages before
        it are read first (and kept for their taker). Once the last one is read, or one is
        missing, the pipe is closed and the child reaped."""
        while len(self._received) <= index and self._pipe is not None:
            message = _receive(self._pipe)
            self._received.append(message)
            if message is None or len(self._received) == self._expected:
                self._finish()
        return self._received[index] if index < len(self._received) else None

    def _finish(self) -> None:
        pipe, self._pipe = self._pipe, None
        if pipe is not None:
            atexit.unregister(self.abandon)
            pipe.close()
            os.waitpid(self.pid, 0)

    def abandon(self) -> None:
        """Stop a child whose answers were not all taken, and reap it."""
        pipe, self._pipe = self._pipe, None
        if pipe is None:
            return
        with contextlib.suppress(OSError):
            os.kill(self.pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            pipe.close()
        with contextlib.suppress(OSError):
            os.waitpid(self.pid, 0)


def _receive(pipe: BinaryIO) -> object:
    """One length-prefixed marshalled message; None when it is cut short or unreadable."""
    head = _read_exactly(pipe, _HEAD)
    if len(head) != _HEAD:
        return None
    size = int.from_bytes(head, "little")
    payload = _read_exactly(pipe, size)
    if len(payload) != size:
        return None
    try:
        return marshal.loads(payload)
    except (EOFError, ValueError, TypeError):
        return None


def _read_exactly(pipe: BinaryIO, size: int) -> bytes:
    """`size` bytes, fewer only at the end of the stream (an unbuffered read returns what
    the pipe holds)."""
    chunks: list[bytes] = []
    left = size
    while left > 0:
        chunk = pipe.read(min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _send(pipe: BinaryIO, payload: bytes) -> None:
    pipe.write(len(payload).to_bytes(_HEAD, "little"))
    pipe.write(payload)
    pipe.flush()


_HEAD = 8  # bytes of a message's length


def prefetch_parses(
    tree: ReadOnceTree,
    cache: ParseCache,
    answers: DrillAnswers | None = None,
    *,
    drill_settings: Callable[[], DrillSettings] | None = None,
) -> Prefetch | None:
    """Start a child parsing the second half of `tree`'s manifest files into `cache`'s entry
    format, and, with `answers`, validating the documents it parsed into theirs, and with
    `drill_settings` too (called in the child), drilling the Rollouts it can; hand it to
    `cache` (and `answers`). None (nothing started) where it cannot or need not."""
    if not _may_fork() or cache.file is None or cache.known:
        return None
    files = manifest_files(tree.files())
    if len(files) < MIN_FILES:
        return None
    share = files[len(files) // 2 :]
    validates = answers is not None
    drills = drill_settings if validates else None  # (drill answers go where validation's do)
    answer, written = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(answer)
        os.close(written)
        return None
    if pid == 0:  # the child: parse (validate, drill), answer, leave
        _answer_and_leave(tree, share, answer, written, validates=validates, drills=drills)
    os.close(written)
    prefetch = Prefetch(
        pid, answer, frozenset(share), validates=validates, drills=drills is not None
    )
    cache.prefetch = prefetch
    if answers is not None:
        answers.prefetch = prefetch
    return prefetch


def _may_fork() -> bool:
    return (
        hasattr(os, "fork")
        and sys.platform != "darwin"  # Apple's libraries are not fork-safe
        and threading.active_count() == 1
        and os.environ.get("HEADWAY_CHECK_PREFETCH") != "0"
    )


def _answer_and_leave(
    tree: ReadOnceTree,
    share: Sequence[str],
    answer: int,
    written: int,
    *,
    validates: bool,
    drills: Callable[[], DrillSettings] | None,
) -> NoReturn:
    """The child's work. The parse entries go out from a thread while the main thread
    validates: the parent reads them only when its loader reaches the child's files, and
    a write to a full pipe would otherwise hold the validation back until then."""
    status = 1
    try:
        os.close(answer)
        quiet = os.open(os.devnull, os.O_RDWR)
        for stream in (0, 1, 2):
            os.dup2(quiet, stream)
        with os.fdopen(written, "wb") as pipe:
            cache = _parsed(tree, share)
            sender = threading.Thread(target=_send, args=(pipe, marshal.dumps(cache.used)))
            sender.start()
            from headway.model.manifests import ParseMemo

            memo = ParseMemo()
            try:
                validated = marshal.dumps(_validated(cache, memo)) if validates else b""
            finally:
                sender.join()  # (the parse entries go whole, whatever happens after them)
            if validates:
                _send(pipe, validated)
            if drills is not None:
                _send(pipe, marshal.dumps(_drilled(cache, memo, drills())))
        status = 0
    finally:
        os._exit(status)


def _parsed(tree: ReadOnceTree, share: Sequence[str]) -> ParseCache:
    """A parse cache holding an entry for each file of `share` that parses cleanly."""
    from headway.cli.check_parse_cache import ParseCache
    from headway.source.errors import SourceError

    cache = ParseCache(Path(os.devnull))  # a file name: entries are kept, never saved
    for path in share:
        try:
            data = tree.read(path)
        except SourceError:  # the parent reads it again and says what is wrong
            continue
        cache.load_documents(data, path)
    return cache


def _validated(cache: ParseCache, memo: ParseMemo) -> dict[str, Any]:
    """What validation says of each document `cache` read from a clean parse, as the
    parent's `check_validation` keeps it (by the document's origin): validation reads
    nothing but the document, so the answer is the parent's own."""
    from headway.cli.check_drill_cache import DrillAnswers
    from headway.model.validate import validate_documents

    answers = DrillAnswers(None)
    for document, origin in cache.origins.values():
        answers.keep_validation(origin, validate_documents([document], memo=memo))
    return answers.to_lend()


def _drilled(cache: ParseCache, memo: ParseMemo, settings: DrillSettings) -> dict[str, Any]:
    """The drill's answers for each canary Rollout `cache` read whose templates are beside
    it (AnalysisTemplates in its directory, ClusterAnalysisTemplates anywhere in the share,
    one of each name): what the check's drill gate computes for it when its Application
    renders that directory, keyed as `DrillAnswers` keeps them, by the Rollout's and the
    templates' content and the settings. A guess that is not what the parent's render
    resolves is a key the parent never asks for."""
    from headway.check.gates import canary_of, template_names
    from headway.cli.check_drill import drill_gate
    from headway.cli.check_drill_cache import DrillAnswers

    documents = [document for document, _origin in cache.origins.values()]
    beside: dict[tuple[str, str, str], list[Document]] = {}
    for document in documents:
        if document.kind in ("AnalysisTemplate", "ClusterAnalysisTemplate"):
            where = "" if document.kind == "ClusterAnalysisTemplate" else _directory(document)
            beside.setdefault((document.kind, where, document.name), []).append(document)
    answers = DrillAnswers(None)
    for rollout in documents:
        if rollout.kind != "Rollout" or canary_of(rollout) is None:
            continue
        templates: dict[str, Document] = {}
        for block, name, kind in template_names(rollout):
            if block not in ("step", "background"):
                continue  # (what the drill gate replays)
            where = "" if kind == "ClusterAnalysisTemplate" else _directory(rollout)
            found = beside.get((kind, where, name), [])
            if len(found) != 1:
                break
            templates[name] = found[0]
        else:
            if templates:
                drill_gate(rollout, templates, settings, parses=memo, answers=answers)
    return answers.to_lend()


def _directory(document: Document) -> str:
    return document.file.rpartition("/")[0]
