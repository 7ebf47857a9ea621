"""Multi-document YAML loading that finds line numbers when asked, and a fast path that never does.

A plain manifest is read by yaml_rs (a Rust reader) where nothing in it can read differently
from PyYAML (`headway.model.yamlrust`); otherwise by PyYAML's C parser (`CSafeLoader`), with
objects built by `headway.model.yamlfast` rather than PyYAML's slower constructor: a plain
manifest straight from the parser's events, without composing a node tree; one with
anchors, aliases or tags from PyYAML's node tree (behind the alias-bomb check). Every
reader returns the same objects and diagnostics. `load_documents` also lets each document
answer the line of any field path (`Document.line_of`): the first such question re-reads
that one file with marks and keeps its node trees, so a clean repository, which never
prints a field's line, never pays for them. `load_documents_fast` is for readers that never
ask (the render cache behind every refresh): its documents answer their own line for any
path.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

import yaml

from headway.model import yamlfast, yamlpatch, yamlreuse, yamlrust
from headway.model.diagnostics import Diagnostic, Severity

__all__ = [
    "AliasError",
    "Document",
    "LoadResult",
    "forget_earlier_reads",
    "format_path",
    "load_documents",
    "load_documents_fast",
    "load_one",
    "paused_gc",
]

# The C loader is ~8x faster; fall back to pure Python only where libyaml is missing.
_BaseLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_BaseLoader):  # type: ignore[misc]
    """PyYAML's safe loader, except that a plain scalar its resolver takes for a number or a
    date it then cannot build (`0b_`, `0x_`, `2001-13-45`) is the string it looks like, as
    Kubernetes' YAML reader takes it, instead of a ValueError escaping as a traceback. So is
    a scalar explicitly tagged with a type it is not (`!!int ''`, `!!bool maybe`), where
    PyYAML would raise IndexError, KeyError or AttributeError."""


def _or_string(construct: Any) -> Any:
    def build(loader: Any, node: yaml.ScalarNode) -> Any:
        try:
            return construct(loader, node)
        except (ValueError, LookupError, AttributeError):
            return str(node.value)

    return build


for _tag, _construct in (
    ("tag:yaml.org,2002:bool", yaml.SafeLoader.construct_yaml_bool),
    ("tag:yaml.org,2002:int", yaml.SafeLoader.construct_yaml_int),
    ("tag:yaml.org,2002:float", yaml.SafeLoader.construct_yaml_float),
    ("tag:yaml.org,2002:timestamp", yaml.SafeLoader.construct_yaml_timestamp),
):
    _Loader.add_constructor(_tag, _or_string(_construct))


# Plain scalars' values, remembered across files.
_PLAIN_SCALARS = yamlfast.PlainScalars(_Loader)
# The last fast read of each file, whose unchanged documents a changed file's read reuses.
_EARLIER_PARSES = yamlreuse.EarlierParses()


PathPart = str | int

# Aliases may repeat a node; past this many values, and ten times the nodes written, a
# document is refused (a "billion laughs" of a few lines would otherwise take every reader
# hours and gigabytes). Kubernetes' YAML reader refuses excessive aliasing the same way.
MAX_EXPANDED_VALUES = 100_000


def format_path(path: Sequence[PathPart]) -> str:
    """`("spec", "steps", 2, "pause")` -> `spec.steps[2].pause`; dotted keys are bracketed."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif "." in part or "/" in part:
            # Annotation and label keys contain dots: `annotations["argocd.argoproj.io/x"]`.
            out += f'["{part}"]'
        else:
            out += f".{part}" if out else part
    return out


class FileNodes:
    """The node trees (with marks) of one file's documents, composed on the first request.

    Finding a field's line needs the node tree PyYAML composes with marks; reading the
    objects does not. A file's documents share one `FileNodes`, which re-reads the file once
    when any of them is first asked for a field's line (an error or a finding to report)."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._roots: list[yaml.Node] | None = None

    def root(self, index: int) -> yaml.Node | None:
        """The node tree of document `index` (as `Document.index` counts), None past the
        documents the file holds before a syntax error."""
        if self._roots is None:
            self._roots = _compose_all(self._text)
        return self._roots[index] if index < len(self._roots) else None


def _compose_all(text: str) -> list[yaml.Node]:
    """The node trees of `text`'s documents as reading them leaves them: PyYAML's constructor
    moves a merge key's fields into the mapping that merges them (so a merged field's line
    is the line it was written at under the anchor), and so does building them here."""
    roots: list[yaml.Node] = []
    loader = _Loader(text)
    try:
        with paused_gc():
            while loader.check_node():
                root = loader.get_node()
                roots.append(root)
                _object_of(loader, root)
    except yaml.YAMLError:
        pass  # the documents before the error are the ones loaded
    finally:
        loader.dispose()
    return roots


@dataclass(frozen=True)
class Document:
    """One YAML document of a file: the object, where it came from, and (for documents that
    `load_documents` read) where to find its fields' lines: the file's `FileNodes`, and the
    path in this document's node tree at which `obj` was written (`derived`)."""

    obj: Any
    file: str
    index: int
    line: int
    _nodes: FileNodes | None = field(default=None, repr=False, compare=False)
    _at: tuple[PathPart, ...] = field(default=(), repr=False, compare=False)

    @cached_property
    def kind(self) -> str:
        """The object's kind, read once: `headway check` asks every document for it dozens of
        times (loaded objects are not changed afterwards; a changed one is a new document)."""
        return str(self.obj.get("kind", "")) if isinstance(self.obj, dict) else ""

    @property
    def name(self) -> str:
        if not isinstance(self.obj, dict):
            return ""
        meta = self.obj.get("metadata")
        if isinstance(meta, dict):
            return str(meta.get("name") or meta.get("generateName") or "")
        return ""

    @property
    def has_field_lines(self) -> bool:
        """Whether `line_of` can tell a field's own line (else it answers `line`)."""
        return self._nodes is not None

    def without_field_lines(self) -> Document:
        """This document, letting go of its file's text and node trees."""
        return replace(self, _nodes=None, _at=()) if self._nodes is not None else self

    def line_of(self, path: Sequence[PathPart]) -> int:
        """The 1-based line of the field at `path`, or of its nearest existing ancestor."""
        if not path or self._nodes is None:
            return self.line
        _node, line, _walked = _walk(self._node(), path)
        return line or self.line

    def derived(self, obj: Any, path: Sequence[PathPart]) -> Document:
        """A document for `obj` (an object generated from a template in this one, such as an
        ApplicationSet's Application) whose field lines are looked up under `path` here, so
        its diagnostics point into the template."""
        _node, line, walked = _walk(self._node(), path)
        at = (*self._at, *path[:walked])
        return Document(obj, self.file, self.index, line or self.line, self._nodes, at)

    def _node(self) -> yaml.Node | None:
        """The node tree `obj` was read from (`_at` in its file's document), if known."""
        if self._nodes is None:
            return None
        node, _line, _walked = _walk(self._nodes.root(self.index), self._at)
        return node

    def diagnostic(
        self, path: Sequence[PathPart], message: str, severity: Severity = Severity.ERROR
    ) -> Diagnostic:
        return Diagnostic(
            file=self.file,
            line=self.line_of(path),
            kind=self.kind,
            name=self.name,
            field=format_path(path),
            severity=severity,
            message=message,
        )


def _walk(node: yaml.Node | None, path: Sequence[PathPart]) -> tuple[yaml.Node | None, int, int]:
    """Down `path` from `node` as far as it exists: the node reached, its line (0 when no
    part of `path` exists) and how many parts were walked."""
    line = 0
    for walked, part in enumerate(path):
        child = _child(node, part)
        if child is None:
            return node, line, walked
        node, line = child
    return node, line, len(path)


def _child(node: yaml.Node | None, part: PathPart) -> tuple[yaml.Node, int] | None:
    if isinstance(node, yaml.MappingNode) and isinstance(part, str):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and key.value == part:
                return value, key.start_mark.line + 1
    if isinstance(node, yaml.SequenceNode) and isinstance(part, int):
        items: list[yaml.Node] = node.value
        if not 0 <= part < len(items):
            return None
        item = items[part]
        return item, item.start_mark.line + 1
    return None


class AliasError(yaml.YAMLError):
    """A document whose aliases make it infinite or enormous (see `MAX_EXPANDED_VALUES`)."""


def load_one(text: str | bytes) -> Any:
    """One YAML document, as `yaml.safe_load` reads it, refusing the alias bombs that
    `load_documents` refuses (`AliasError`, a `yaml.YAMLError`). For config and build files
    read whole: kustomizations, Chart.yaml, values files, argocd-cm entries. Plain text is
    read as `load_documents` reads it (yaml_rs, or the parser's events); anything else, and
    a stream of several documents (PyYAML's error), through the node tree."""
    try:
        read: list[yamlreuse.ParsedDocument] | None = (
            _read_plain(text) if isinstance(text, str) else _read_events(text)
        )
    except (yamlfast.NotPlain, yaml.YAMLError):
        read = None
    if read is not None and len(read) <= 1:
        return read[0][0] if read else None
    return _load_one_composed(text)


def _load_one_composed(text: str | bytes) -> Any:
    """`load_one` through PyYAML's node tree: aliases checked, PyYAML's errors raised."""
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        problem = _alias_problem(node)
        if problem:
            raise AliasError(problem)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _alias_problem(root: yaml.Node) -> str:
    """Why a document's aliases make it unreadable ("" when they do not): an alias inside
    its own anchor (an infinite value), or aliases that repeat too much."""
    expanded: dict[int, int] = {}  # values each node stands for, its repetitions included
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        children = _children(node)
        if children_done:
            open_nodes.discard(id(node))
            expanded[id(node)] = 1 + sum(expanded[id(child)] for child in children)
            continue
        if id(node) in expanded:
            continue
        open_nodes.add(id(node))
        stack.append((node, True))
        for child in children:
            if id(child) in open_nodes:
                line = child.start_mark.line + 1
                return f"YAML error: the node anchored at line {line} contains an alias to itself"
            if id(child) not in expanded:
                stack.append((child, False))
    total = expanded[id(root)]
    if total > MAX_EXPANDED_VALUES and total > 10 * len(expanded):
        return (
            f"YAML error: aliases repeat {len(expanded)} nodes into {total} values "
            f"(at most {MAX_EXPANDED_VALUES} are read)"
        )
    return ""


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


@dataclass(frozen=True)
class LoadResult:
    documents: list[Document]
    diagnostics: list[Diagnostic]


class _PausedGC:
    def __enter__(self) -> None:
        self._was_enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *_exc: object) -> None:
        if self._was_enabled:
            gc.enable()


def paused_gc() -> AbstractContextManager[None]:
    """Defer the cyclic garbage collector while building many small acyclic objects.

    Keeping every node tree alive makes each automatic collection rescan all of them; on 2 MB
    of manifests that tripled the load time (bench/bench_yaml_load.py). Collection resumes,
    unchanged, when the block ends. (A class, not a generator: it is entered once per file
    read, and `contextlib.contextmanager`'s generator cost more than the pause itself.)
    """
    return _PausedGC()


def load_documents(text: str, file: str) -> LoadResult:
    """Load every document of `text`; a syntax error ends the file but keeps what came before.

    Empty documents (a stray `---`) are skipped, as kubectl does. Each document finds its
    fields' lines on request (`Document.line_of`), re-reading the file with marks then.
    """
    with paused_gc():
        return _load_documents(text, file, nodes=FileNodes(text))


def load_documents_fast(text: str, file: str) -> LoadResult:
    """`load_documents` for readers that never ask for a field's line: equal objects, equal
    diagnostics, and each document's own line, which `Document.line_of` answers for any path.
    Cheaper than PyYAML's own `load_all` (docs/performance.md)."""
    with paused_gc():
        return _load_documents(text, file, nodes=None)


def forget_earlier_reads() -> None:
    """Let go of every file's last read (`yamlreuse`): the next read of each parses it
    whole, as in a new process (benchmarks of a cold refresh)."""
    _EARLIER_PARSES.clear()


def _read_plain(text: str) -> list[yamlreuse.ParsedDocument]:
    """Plain documents read by yaml_rs where it reads them as PyYAML does (`yamlrust`),
    else from PyYAML's events; `yamlfast.NotPlain` or PyYAML's error for any other text."""
    quick = yamlrust.read_documents(text)
    if quick is None:
        return _read_events(text)
    if yamlrust.crosschecking():
        _crosscheck(text, quick)
    return quick


def _read_events(text: str | bytes) -> list[yamlreuse.ParsedDocument]:
    loader = _Loader(text)
    try:
        return yamlfast.read_plain_documents(loader, _PLAIN_SCALARS)
    finally:
        loader.dispose()


def _crosscheck(text: str, quick: list[yamlreuse.ParsedDocument]) -> None:
    """Fail loudly where yaml_rs read `text` otherwise than PyYAML (`yamlrust.crosschecking`)."""
    try:
        slow = _read_events(text)
    except (yamlfast.NotPlain, yaml.YAMLError) as err:
        problem: str | None = f"PyYAML does not read it as plain documents: {err}"
    else:
        problem = yamlrust.difference(quick, slow)
    if problem is not None:
        raise yamlrust.disagreement(problem, text)


def _read_recording(text: str) -> list[tuple[Any, int, yamlpatch.ScalarLines]]:
    loader = _Loader(text)
    try:
        return yamlpatch.read_recording(loader, _PLAIN_SCALARS)
    finally:
        loader.dispose()


class _PlainValue:
    """A plain scalar's value as `_read_plain` reads it, for `yamlpatch` (a loader of its
    own: the constructors of the tags kept need one, never its stream)."""

    def __init__(self) -> None:
        self._loader: Any = None

    def __call__(self, text: str) -> Any:
        value = _PLAIN_SCALARS.known.get(text, _PLAIN_SCALARS)
        if value is not _PLAIN_SCALARS:
            return value
        if self._loader is None:
            self._loader = _Loader("")
        return _PLAIN_SCALARS.value(self._loader, text)


_RECORDING = (_read_recording, _PlainValue())


def _load_documents(text: str, file: str, *, nodes: FileNodes | None) -> LoadResult:
    """Plain documents straight from the parser's events (without field lines, the pieces
    of `file`'s last read that `text` repeats are not parsed again: `yamlreuse`); a file
    with an anchor, an alias, a tag or a syntax error is read again through PyYAML's node
    trees, which check aliases and report errors with their lines."""
    try:
        fast = nodes is None
        read = (
            _EARLIER_PARSES.read(text, file, _read_plain, recording=_RECORDING)
            if fast
            else _read_plain(text)
        )
    except (yamlfast.NotPlain, yaml.YAMLError):
        return _compose_documents(text, file, nodes=nodes)
    documents = [
        Document(obj, file, index, line, nodes)
        for index, (obj, line) in enumerate(read)
        if obj is not None
    ]
    return LoadResult(documents, [])


_UNQUOTED_TEMPLATE = re.compile(r"(?:^\s*-|:)\s+\{\{|^\s*\{\{")


def _with_template_hint(problem: str, text: str, line: int) -> str:
    """PyYAML's problem, plus the usual cause when the line has one: a value written as an
    unquoted `{{ ... }}` template (an ApplicationSet's, a Helm-style one), which YAML reads as
    a mapping inside a mapping."""
    lines = text.splitlines()
    if not 0 < line <= len(lines) or not _UNQUOTED_TEMPLATE.search(lines[line - 1]):
        return problem
    return (
        f"{problem} (a value that begins with {{{{ is read as a YAML mapping: quote it, "
        "e.g. '{{.name}}-app')"
    )


def _compose_documents(text: str, file: str, *, nodes: FileNodes | None) -> LoadResult:
    documents: list[Document] = []
    diagnostics: list[Diagnostic] = []
    loader = _Loader(text)
    index = 0
    try:
        while loader.check_node():
            node = loader.get_node()
            obj, refused = _object_of(loader, node)
            if refused:
                line = node.start_mark.line + 1
                diagnostics.append(Diagnostic(file, line, "", "", "", Severity.ERROR, refused))
            elif obj is not None:
                documents.append(Document(obj, file, index, node.start_mark.line + 1, nodes))
            index += 1
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line = mark.line + 1 if mark is not None else 1
        problem = _with_template_hint(err.problem or err.context or "invalid YAML", text, line)
        diagnostics.append(
            Diagnostic(file, line, "", "", "", Severity.ERROR, f"YAML syntax error: {problem}")
        )
    except yaml.reader.ReaderError as err:
        # Its str() is a multi-line dump naming "<unicode string>"; say it on one line.
        line = text.count("\n", 0, max(err.position, 0)) + 1
        problem = f"unacceptable character #x{err.character:04x}: {err.reason}"
        diagnostics.append(Diagnostic(file, line, "", "", "", Severity.ERROR, problem))
    except yaml.YAMLError as err:
        diagnostics.append(Diagnostic(file, 1, "", "", "", Severity.ERROR, f"YAML error: {err}"))
    finally:
        loader.dispose()
    return LoadResult(documents, diagnostics)


def _object_of(loader: Any, node: yaml.Node) -> tuple[Any, str]:
    """The object a document's node tree stands for, or why it is refused (its aliases).

    Most documents are built directly (`yamlfast.build_object`, about twice as fast as
    PyYAML's constructor); one it leaves to PyYAML (a node repeated by an alias, a merge
    key, an unusual tag) is first checked for aliases that repeat too much."""
    try:
        return yamlfast.build_object(node, loader), ""
    except yamlfast.NotPlain:
        pass
    refused = _alias_problem(node)
    if refused:
        return None, refused
    return loader.construct_document(node), ""
