"""What the drill answered in earlier `headway check` runs, kept between runs.

A pre-commit hook checks the same Rollouts again and again; replaying each one's analysis on
simulated traffic (numpy, the drill's replay and the judge) cost a new process about a fifth
of a second at 1,000 Applications even when one distinct plan needs drilling, and more with
more plans. Three kinds of answer are kept, each under what it depends on:

- `inputs`: a Rollout's whole verdict, by a SHA-256 of the Rollout's object, the names and
  objects of the templates it names, and the drill settings (marshalled, so equal data of
  the same types gives the same key); a hit needs neither the planner nor the drill;
- `plan`: the drill's numbers for one plan, by a SHA-256 of the in-process key `check_drill`
  already uses (weights, pauses, each metric's policy, reading and conditions), so an edit
  that leaves the plan alone (a new image) is not replayed;
- `valid`: what validation said of one document read from a file (`check_validation`), by
  its origin (the SHA-256 of the file's bytes, its path and the document's index): the
  same bytes give the same documents, and validation reads nothing but the document. A
  pre-commit hook after a one-file change validated all 6,000 documents of a
  1,000-Application repository again.

An answer is only as good as the code that computed it, so the file records every module
file loaded when it was written (path, size, modification time: Headway's, numpy's, the
standard library's), and the data files beside Headway's modules (the conditions grammar),
and is not read when any of them changed or went, nor under another Python or module
search path (another checkout would load other files). What is read is
checked for shape before use. The file lives beside the parse cache (`check_cache_files`); a
run that made answers rewrites it, keeping the others up to a bound, and one that made none
only marks it used. `headway check --no-cache` neither reads nor writes it.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeGuard

from headway.check.drill_engine import DrillSettings, DrillVerdict
from headway.cli import check_cache_files
from headway.model.diagnostics import Diagnostic, Severity
from headway.model.yamlload import Document

if TYPE_CHECKING:
    from headway.cli.check_prefetch import Prefetch

__all__ = ["DrillAnswers", "DrillNumbers", "open_answers"]

_FORMAT = b"headway-check-drills 2\n"  # 2: validation answers keyed by the origin itself
_PREFIX = "drills"
_SPARE = 256  # unused answers kept beyond as many as a run uses
_KEY_MARSHAL_VERSION = 2  # no back-references: equal data always marshals to equal bytes
# detected, paused, promoted, undecided, median_abort, bad_requests, false_aborts
DrillNumbers = tuple[float, float, float, float, float | None, float, float]
_Stats = dict[str, tuple[int, int]]
_SEVERITIES = frozenset(str(s) for s in Severity)


@dataclass
class DrillAnswers:
    """The answers read from one cache file (`known`) and those this run used or made
    (`used`); `code` is what the known answers were computed with (module file stats).
    `lent` holds answers a first run's child computed (`check_prefetch`), with `lent_code`
    the module files it had loaded (the drill's, which this process may never load): new
    answers to keep once used, as the run's own are, under the code of both processes."""

    file: Path | None
    known: dict[str, Any] = field(default_factory=dict)
    used: dict[str, Any] = field(default_factory=dict)
    code: _Stats = field(default_factory=dict)
    lent: dict[str, Any] = field(default_factory=dict)
    lent_code: _Stats = field(default_factory=dict)
    # The child validating and drilling some documents of a first run: its validation
    # answers are taken when validation first asks for one that is not known, its drill
    # answers when the drill gate first does.
    prefetch: Prefetch | None = None
    _borrowed: set[str] = field(default_factory=set, init=False, repr=False)

    def inputs_key(
        self, rollout: Document, templates: Mapping[str, Document], settings: DrillSettings
    ) -> str | None:
        """The key of everything a Rollout's verdict depends on; None where marshal cannot
        store a value (a date): such a Rollout is drilled each run."""
        inputs = (
            rollout.obj,
            tuple((name, doc.obj) for name, doc in templates.items()),
            _values(settings),
        )
        try:
            encoded = marshal.dumps(inputs, _KEY_MARSHAL_VERSION)
        except ValueError:
            return None
        return "inputs:" + hashlib.sha256(encoded).hexdigest()

    def verdict(self, key: str) -> DrillVerdict | None:
        stored = self._recall(key)
        if stored is None:
            stored = self._borrow("drills", key)
        if not _is_verdict(stored):
            return None
        return DrillVerdict(*stored)

    def keep_verdict(self, key: str, verdict: DrillVerdict) -> None:
        self.used[key] = _values(verdict)

    def numbers(self, plan_key: str, settings: DrillSettings) -> DrillNumbers | None:
        key = _plan_entry(plan_key, settings)
        stored = self._recall(key)
        if stored is None:
            stored = self._borrow("drills", key)
        return stored if _is_numbers(stored) else None

    def keep_numbers(self, plan_key: str, settings: DrillSettings, numbers: DrillNumbers) -> None:
        self.used[_plan_entry(plan_key, settings)] = numbers

    def validation(self, origin: str) -> tuple[Diagnostic, ...] | None:
        """What validation said of the document `origin` names, when kept (or when a first
        run's child validated it)."""
        key = _validation_entry(origin)
        stored = self._recall(key)
        if stored is None:
            stored = self._borrow("validation", key)
        if not _is_diagnostics(stored):
            return None
        return tuple(
            Diagnostic(file, line, kind, name, path, Severity(severity), message)
            for file, line, kind, name, path, severity, message in stored
        )

    def keep_validation(self, origin: str, diagnostics: Sequence[Diagnostic]) -> None:
        self.used[_validation_entry(origin)] = tuple(
            (d.file, d.line, d.kind, d.name, d.field, str(d.severity), d.message)
            for d in diagnostics
        )

    def _borrow(self, kind: str, key: str) -> Any:
        """`key`'s answer after taking the first run's child's answers of `kind`
        ("validation" or "drills"; once, when they are ready: until then the caller works
        the answer out itself), or None."""
        if self.prefetch is None or kind in self._borrowed or not self.prefetch.ready(kind):
            return None
        self._borrowed.add(kind)
        taken = self.prefetch.take_validation if kind == "validation" else self.prefetch.take_drills
        self.lend(taken())
        return self._recall(key)

    def to_lend(self) -> dict[str, Any]:
        """The answers this process made, with the module files it loaded to make them, for
        another process to `lend` (a first run's child hands them to the parent)."""
        return {"answers": dict(self.used), "code": _loaded_code()}

    def lend(self, message: object) -> None:
        """Take the answers of another process's `to_lend`; none when its code could not be
        fingerprinted or the message is not of that shape."""
        if not isinstance(message, dict):
            return
        answers, code = message.get("answers"), message.get("code")
        if not isinstance(answers, dict) or not _is_stats(code):
            return
        self.lent.update((k, v) for k, v in answers.items() if isinstance(k, str))
        self.lent_code.update(code)

    def _recall(self, key: str) -> Any:
        stored = self.used.get(key, self.known.get(key))
        if stored is None and self.lent:
            stored = self.lent.get(key)
        if stored is not None:
            self.used[key] = stored
        return stored

    def save(self) -> None:
        """Write the answers with those this run made (and the code they depend on), else,
        when it made none, mark the file used; a cache that cannot be written is left as it
        was. Answers this run did not use are kept while they are not more than those it
        used (plus `_SPARE`): a verdict answers without its plan's numbers, which the next
        edit keeping that plan needs."""
        if self.file is None:
            return
        if self.used.keys() <= self.known.keys():
            check_cache_files.mark_used(self.file)
            return
        kept = {**self.known, **self.used}
        if len(kept) > 2 * len(self.used) + _SPARE:
            kept = self.used
        loaded = _loaded_code()
        if loaded is None:
            return  # code that cannot be fingerprinted (a zip, a deleted file): keep nothing
        code = {**self.code, **self.lent_code, **loaded}
        stored = {**_interpreter(), "code": code, "answers": kept}
        try:
            check_cache_files.replace_file(
                self.file, check_cache_files.sealed(_FORMAT, stored), prefix=_PREFIX
            )
        except OSError:
            return


def open_answers(root: Path, *, directory: Path | None = None) -> DrillAnswers:
    """The drill answers kept for the directory `root` checks (in `directory`, by default
    `check_cache_files.cache_directory()`); none when there are none or they cannot be
    trusted."""
    file = check_cache_files.cache_file(root, prefix=_PREFIX, directory=directory)
    content = _read(file)
    if content is None:
        return DrillAnswers(file)
    code, answers = content
    return DrillAnswers(file, known=answers, code=code)


def _read(file: Path) -> tuple[_Stats, dict[str, Any]] | None:
    """The recorded code and the answers of a cache file whose format and checksum hold,
    written by this Python, with every module file it records unchanged; else None."""
    stored = check_cache_files.unsealed(file, _FORMAT)
    if not isinstance(stored, dict) or any(stored.get(k) != v for k, v in _interpreter().items()):
        return None
    code, answers = stored.get("code"), stored.get("answers")
    if not isinstance(code, dict) or not isinstance(answers, dict) or not _unchanged(code):
        return None
    return code, {k: v for k, v in answers.items() if isinstance(k, str)}


def _interpreter() -> dict[str, Any]:
    """Which Python, and where it finds modules: another checkout of Headway (another
    worktree, another virtualenv) may load other code under the same recorded files."""
    return {"python": sys.version, "executable": sys.executable, "path": tuple(sys.path)}


def _loaded_code() -> _Stats | None:
    """Size and modification time of the file of every module loaded now, and of the data
    files beside Headway's loaded modules (`_headway_data_files`); None when one of them
    cannot be read (a module from a zip archive, a file since removed)."""
    stats: _Stats = {}
    modules = list(sys.modules.values())
    paths = [getattr(module, "__file__", None) for module in modules]
    for path in [*paths, *_headway_data_files(modules)]:
        if isinstance(path, str) and path not in stats:
            try:
                found = os.stat(path)
            except OSError:
                return None
            stats[path] = (found.st_size, found.st_mtime_ns)
    return stats


def _headway_data_files(modules: list[Any]) -> list[str]:
    """The files other than Python source in the directories of Headway's loaded modules:
    what the code reads as package data (the conditions grammar `expr/conditions.lark`
    decides how a metric's condition reads, so an answer depends on it as on the code)."""
    directories = {
        os.path.dirname(path)
        for module in modules
        if getattr(module, "__name__", "").startswith("headway.")
        and isinstance(path := getattr(module, "__file__", None), str)
    }
    found = []
    for directory in sorted(directories):
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        found += [e.path for e in entries if e.is_file() and not e.name.endswith((".py", ".pyc"))]
    return found


def _unchanged(code: dict[Any, Any]) -> bool:
    for path, recorded in code.items():
        try:
            found = os.stat(path)
        except (OSError, TypeError, ValueError):
            return False
        if recorded != (found.st_size, found.st_mtime_ns):
            return False
    return True


def _plan_entry(plan_key: str, settings: DrillSettings) -> str:
    text = repr((plan_key, _values(settings)))
    return "plan:" + hashlib.sha256(text.encode()).hexdigest()


def _values(value: DrillSettings | DrillVerdict) -> tuple[Any, ...]:
    """The fields of a flat dataclass of scalars (and tuples of strings), in order: what
    `dataclasses.astuple` gives for these, without its deep copy of every value (a tenth of
    a second for 1,000 Rollouts, on a first run)."""
    return tuple(getattr(value, name) for name in value.__dataclass_fields__)


def _validation_entry(origin: str) -> str:
    """The origin is already a content hash with a path and an index: hashing it again
    cost a first run of 1,000 Applications 12,000 SHA-256 digests."""
    return "valid:" + origin


def _is_stats(value: Any) -> TypeGuard[_Stats]:
    """The shape `_loaded_code` gives: path -> (size, modification time)."""
    return isinstance(value, dict) and all(
        isinstance(path, str)
        and isinstance(stat, tuple)
        and len(stat) == 2
        and all(type(n) is int for n in stat)
        for path, stat in value.items()
    )


def _is_diagnostics(value: Any) -> bool:
    """The shape `keep_validation` stores: (file, line, kind, name, field, severity,
    message) per diagnostic, the severity one of `Severity`'s values."""
    return isinstance(value, tuple) and all(
        isinstance(item, tuple)
        and len(item) == 7
        and type(item[1]) is int
        and all(isinstance(item[i], str) for i in (0, 2, 3, 4, 5, 6))
        and item[5] in _SEVERITIES
        for item in value
    )


def _is_number(value: Any) -> bool:
    return type(value) in (int, float)


def _is_numbers(value: Any) -> bool:
    return (
        isinstance(value, tuple)
        and len(value) == 7
        and all(_is_number(v) or (i == 4 and v is None) for i, v in enumerate(value))
    )


def _is_verdict(value: Any) -> bool:
    """The shape `dataclasses.astuple(DrillVerdict)` gives: the reason it was not drilled,
    the numbers, and the whole-service metric names."""
    return (
        isinstance(value, tuple)
        and len(value) == 9
        and isinstance(value[0], str)
        and _is_numbers(value[1:8])
        and isinstance(value[8], tuple)
        and all(isinstance(name, str) for name in value[8])
    )
