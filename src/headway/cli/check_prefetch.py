"""A first `headway check` parses on a second core while the first one starts up.

With an empty cache of parsed files (`check_parse_cache`: a pre-commit hook's first run, a
new Headway version, a fresh CI machine) the command parses every manifest file, and before
it can start it imports the loader and the rules. Here the `headway` program forks once, as
soon as it knows the files: the child parses the second half of them, in the files'
order, while the parent imports, reads the config and then parses the first half; when the
parent's loader first asks for a file of the child's share, it takes everything the child
parsed (the cache's own entries: marshalled documents, by the SHA-256 of the bytes they were
read from) and goes on as a run with a warm cache does. On 1,000 Applications on 2 cores the parent
reached the child's files 0.3-0.5 s into the run and waited 12-90 ms there, instead of
parsing 2,500 files itself (docs/performance.md; bench/bench_check.py's first-run row went
from 1.35x to 1.29x and 1.28x of its yardstick, on a noisy machine).

What the child parsed is keyed by content, so it is right for whatever the parent reads,
and a file changed in between is just a miss. Anything that goes wrong in the child (an
error, a signal, output that does not unmarshal) leaves the parent with no entries: it
parses those files itself, as without the child. The child writes nothing but its answer
(its standard streams are /dev/null, it leaves by `os._exit`: no buffered output is
written twice and no `atexit` callback runs), and a child whose answer is never taken is
killed when the command ends.

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
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from headway.cli.check_tree import ReadOnceTree, manifest_files

if TYPE_CHECKING:
    from headway.cli.check_parse_cache import ParseCache

__all__ = ["MIN_FILES", "Prefetch", "prefetch_parses"]

# Fewer files than this are parsed in one process. Measured: the fork costs the parent about
# 0.6 ms and each file parsed elsewhere saves about 0.05 ms, so the child would pay off from
# a few dozen files; below 200 it saves a few milliseconds, not worth a second process.
MIN_FILES = 200


class Prefetch:
    """A child parsing `paths`; `take()` waits for it and returns its entries (once)."""

    def __init__(self, pid: int, answer: int, paths: frozenset[str]) -> None:
        self.pid = pid
        self.paths = paths
        self._answer: int | None = answer
        atexit.register(self.abandon)

    def take(self) -> dict[str, bytes]:
        """The child's entries; empty when it failed. Waits for it to finish."""
        answer, self._answer = self._answer, None
        if answer is None:
            return {}
        atexit.unregister(self.abandon)
        chunks = []
        with os.fdopen(answer, "rb") as pipe:
            while chunk := pipe.read(1 << 20):
                chunks.append(chunk)
        _, status = os.waitpid(self.pid, 0)
        if status != 0:
            return {}
        try:
            entries = marshal.loads(b"".join(chunks))
        except (EOFError, ValueError, TypeError):
            return {}
        if not isinstance(entries, dict):
            return {}
        return {k: v for k, v in entries.items() if type(k) is str and type(v) is bytes}

    def abandon(self) -> None:
        """Stop a child whose answer was not taken, and reap it."""
        answer, self._answer = self._answer, None
        if answer is None:
            return
        with contextlib.suppress(OSError):
            os.kill(self.pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.close(answer)
        with contextlib.suppress(OSError):
            os.waitpid(self.pid, 0)


def prefetch_parses(tree: ReadOnceTree, cache: ParseCache) -> Prefetch | None:
    """Start a child parsing the second half of `tree`'s manifest files into `cache`'s entry
    format, and hand it to `cache`; None (nothing started) where it cannot or need not."""
    if not _may_fork() or cache.file is None or cache.known:
        return None
    files = manifest_files(tree.files())
    if len(files) < MIN_FILES:
        return None
    share = files[len(files) // 2 :]
    answer, written = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(answer)
        os.close(written)
        return None
    if pid == 0:  # the child: parse, answer, leave
        _answer_and_leave(tree, share, answer, written)
    os.close(written)
    prefetch = Prefetch(pid, answer, frozenset(share))
    cache.prefetch = prefetch
    return prefetch


def _may_fork() -> bool:
    return (
        hasattr(os, "fork")
        and sys.platform != "darwin"  # Apple's libraries are not fork-safe
        and threading.active_count() == 1
        and os.environ.get("HEADWAY_CHECK_PREFETCH") != "0"
    )


def _answer_and_leave(
    tree: ReadOnceTree, share: Sequence[str], answer: int, written: int
) -> NoReturn:
    status = 1
    try:
        os.close(answer)
        quiet = os.open(os.devnull, os.O_RDWR)
        for stream in (0, 1, 2):
            os.dup2(quiet, stream)
        payload = marshal.dumps(_parsed(tree, share))
        with os.fdopen(written, "wb") as pipe:
            pipe.write(payload)
        status = 0
    finally:
        os._exit(status)


def _parsed(tree: ReadOnceTree, share: Sequence[str]) -> dict[str, bytes]:
    """What a parse cache keeps of each file of `share` that parses cleanly."""
    from headway.cli.check_parse_cache import ParseCache
    from headway.source.errors import SourceError

    cache = ParseCache(Path(os.devnull))  # a file name: entries are kept, never saved
    for path in share:
        try:
            data = tree.read(path)
        except SourceError:  # the parent reads it again and says what is wrong
            continue
        cache.load_documents(data, path)
    return cache.used
