"""Multi-document YAML loading that keeps line numbers, and a fast path that does not.

Objects are built by PyYAML's C parser (`CSafeLoader`), the fastest reader measured here.
`load_documents` keeps the composed node tree beside each document so that a line for any
field path is found on demand by walking the nodes, at no cost for documents that never need
one. `load_documents_fast` is for readers that never ask for a field's line (the render cache
behind every refresh): the same objects and diagnostics, without node trees (which every
garbage collection would rescan), read with a resolver that remembers its answers. Both build
plain documents with `headway.model.yamlfast` rather than PyYAML's slower constructor.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import yaml

from headway.model import yamlfast
from headway.model.diagnostics import Diagnostic, Severity

__all__ = [
    "AliasError",
    "Document",
    "LoadResult",
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


class _FastLoader(_Loader):
    """`_Loader` for `load_documents_fast`, with the resolver's answers remembered."""

    resolve = yamlfast.remembering_resolver(_Loader.resolve)


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


@dataclass(frozen=True)
class Document:
    """One YAML document of a file: the object, where it came from, and its node tree."""

    obj: Any
    file: str
    index: int
    line: int
    _node: yaml.Node | None = field(default=None, repr=False, compare=False)

    @property
    def kind(self) -> str:
        return str(self.obj.get("kind", "")) if isinstance(self.obj, dict) else ""

    @property
    def name(self) -> str:
        if not isinstance(self.obj, dict):
            return ""
        meta = self.obj.get("metadata")
        if isinstance(meta, dict):
            return str(meta.get("name") or meta.get("generateName") or "")
        return ""

    def line_of(self, path: Sequence[PathPart]) -> int:
        """The 1-based line of the field at `path`, or of its nearest existing ancestor."""
        node = self._node
        line = self.line
        for part in path:
            child = _child(node, part)
            if child is None:
                break
            node, child_line = child
            line = child_line
        return line

    def derived(self, obj: Any, path: Sequence[PathPart]) -> Document:
        """A document for `obj` (an object generated from a template in this one, such as an
        ApplicationSet's Application) whose field lines are looked up under `path` here, so
        its diagnostics point into the template."""
        node, line = self._node, self.line
        for part in path:
            child = _child(node, part)
            if child is None:
                break
            node, line = child
        return Document(obj, self.file, self.index, line, node)

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
    read whole: kustomizations, Chart.yaml, values files, argocd-cm entries."""
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


@contextmanager
def paused_gc() -> Iterator[None]:
    """Defer the cyclic garbage collector while building many small acyclic objects.

    Keeping every node tree alive makes each automatic collection rescan all of them; on 2 MB
    of manifests that tripled the load time (bench/bench_yaml_load.py). Collection resumes,
    unchanged, when the block ends.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def load_documents(text: str, file: str) -> LoadResult:
    """Load every document of `text`; a syntax error ends the file but keeps what came before.

    Empty documents (a stray `---`) are skipped, as kubectl does.
    """
    with paused_gc():
        return _load_documents(text, file, keep_nodes=True)


def load_documents_fast(text: str, file: str) -> LoadResult:
    """`load_documents` for readers that never ask for a field's line: equal objects, equal
    diagnostics, and each document's own line, but no node tree (`Document.line_of` answers
    the document's line). Cheaper than PyYAML's own `load_all` (docs/performance.md)."""
    with paused_gc():
        return _load_documents(text, file, keep_nodes=False)


def _load_documents(text: str, file: str, *, keep_nodes: bool) -> LoadResult:
    documents: list[Document] = []
    diagnostics: list[Diagnostic] = []
    loader = _Loader(text) if keep_nodes else _FastLoader(text)
    index = 0
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                continue
            obj, refused = _object_of(loader, node)
            if refused:
                line = node.start_mark.line + 1
                diagnostics.append(Diagnostic(file, line, "", "", "", Severity.ERROR, refused))
            elif obj is not None:
                kept = node if keep_nodes else None
                documents.append(Document(obj, file, index, node.start_mark.line + 1, kept))
            index += 1
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line = mark.line + 1 if mark is not None else 1
        problem = err.problem or err.context or "invalid YAML"
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
