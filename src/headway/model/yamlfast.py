"""Building Python objects from YAML faster than PyYAML's constructor.

PyYAML's `SafeConstructor` spends most of a manifest's load in per-node bookkeeping that plain
Kubernetes YAML never needs: a memo of every node built (for aliases), generators for
recursive structures, merge-key flattening and a method lookup per tag. Plain manifests
(maps, sequences and the scalars the safe resolver assigns, no anchor, alias or tag) are read
here with the very constructors the loader would call for each scalar tag:

- `read_plain_documents` builds every document of a stream straight from the C parser's
  events, composing no node tree at all, with the plain scalars' meanings remembered
  (`PlainScalars`). It gives up (`NotPlain`) on the first anchor, alias or tag, so that the
  caller reads that stream through PyYAML's composer instead.
- `build_object` builds one composed node tree, and hands back (`NotPlain`) a node it has
  already built (a repeated node means an alias, which the caller must first check for alias
  bombs, `yamlload._alias_problem`), a merge key or an unusual tag.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml import (
    MappingEndEvent,
    MappingNode,
    MappingStartEvent,
    ScalarEvent,
    ScalarNode,
    SequenceEndEvent,
    SequenceNode,
    SequenceStartEvent,
    StreamEndEvent,
)

__all__ = ["NotPlain", "PlainScalars", "build_object", "read_plain_documents"]

_STR = "tag:yaml.org,2002:str"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
# Scalar tags whose constructor returns an immutable value from the text alone; `binary`,
# `merge` (`<<`), `value` (`=`) and any other tag go to PyYAML's constructor.
SCALAR_TAGS = tuple(
    f"tag:yaml.org,2002:{name}" for name in ("null", "bool", "int", "float", "timestamp")
)
# Plain scalars' values kept for texts up to this many characters, and at most this many.
_REMEMBERED_TEXT = 64
_REMEMBERED_ANSWERS = 50_000


class NotPlain(Exception):
    """The document holds something `build_object` leaves to PyYAML's constructor."""


def build_object(root: yaml.Node, loader: Any) -> Any:
    """The object `loader.construct_document(root)` would return for a document without
    aliases, merge keys or unusual tags; `NotPlain` for any other document."""
    constructors = {tag: loader.yaml_constructors[tag] for tag in SCALAR_TAGS}
    built: dict[tuple[str, str], Any] = {}  # (tag, text) -> value: scalars repeat a lot
    seen: set[int] = set()

    def scalar(node: ScalarNode) -> Any:
        key = (node.tag, node.value)
        value = built.get(key, built)
        if value is built:
            construct = constructors.get(node.tag)
            if construct is None:
                raise NotPlain(node.tag)
            value = built[key] = construct(loader, node)
        return value

    def build(node: yaml.Node) -> Any:
        kind = node.__class__
        if kind is ScalarNode:
            return node.value if node.tag == _STR else scalar(node)  # type: ignore[arg-type]
        if id(node) in seen:
            raise NotPlain("a node repeated by an alias")
        seen.add(id(node))
        if kind is MappingNode and node.tag == _MAP:
            mapping = {}
            for key_node, value_node in node.value:
                if key_node.__class__ is not ScalarNode:
                    raise NotPlain("a key that is a collection")
                key = key_node.value if key_node.tag == _STR else scalar(key_node)
                mapping[key] = build(value_node)
            return mapping
        if kind is SequenceNode and node.tag == _SEQ:
            return [build(item) for item in node.value]
        raise NotPlain(node.tag)

    try:
        return build(root)
    except RecursionError:  # nesting deeper than Python's stack: PyYAML's turn
        raise NotPlain("deep nesting") from None


class PlainScalars:
    """The value of a plain (unquoted, untagged) scalar, as the given loader class reads it.

    The safe resolver has no path resolvers, so a plain scalar's tag depends on its text
    alone, and the constructors of the tags kept here (`SCALAR_TAGS`) return immutable values
    (PyYAML itself hands out one shared NaN): the value of a short text is remembered and
    shared by every document read afterwards. Manifests repeat the same keys and values
    thousands of times."""

    def __init__(self, loader_class: Any) -> None:
        self._resolve = loader_class.resolve
        self._constructors = {tag: loader_class.yaml_constructors[tag] for tag in SCALAR_TAGS}
        self.known: dict[str, Any] = {}  # text -> value; readers look here before `value`

    def value(self, loader: Any, text: str) -> Any:
        value = self.known.get(text, self.known)
        if value is self.known:
            value = self._build(loader, text)
            if len(text) <= _REMEMBERED_TEXT:
                if len(self.known) >= _REMEMBERED_ANSWERS:
                    self.known.clear()
                self.known[text] = value
        return value

    def _build(self, loader: Any, text: str) -> Any:
        tag = self._resolve(loader, ScalarNode, text, (True, False))
        if tag == _STR:
            return text
        construct = self._constructors.get(tag)
        if construct is None:  # `<<` (merge) or `=` (value)
            raise NotPlain(tag)
        return construct(loader, ScalarNode(tag, text))


_KEY_NEXT = object()  # a mapping being read waits for its next key


def read_plain_documents(loader: Any, scalars: PlainScalars) -> list[tuple[Any, int]]:
    """Each document of `loader`'s stream (a fresh C loader) as (object, 1-based line of its
    root), empty documents included (as None), read from the parser's events.

    `NotPlain` when the stream holds an anchor, an alias, a tag or a key that is a collection;
    PyYAML's errors (`yaml.YAMLError`) as the parser raises them."""
    next_event = loader.get_event
    next_event()  # the stream's start
    documents: list[tuple[Any, int]] = []
    while next_event().__class__ is not StreamEndEvent:  # a document's start
        root = loader.peek_event()
        documents.append((_read_node(loader, scalars), root.start_mark.line + 1))
        next_event()  # the document's end
    return documents


def _read_node(loader: Any, scalars: PlainScalars) -> Any:
    """The object of the node whose events come next, built without recursion (so that
    nesting deeper than Python's stack is read too)."""
    next_event = loader.get_event
    known = scalars.known
    open_collections: list[Any] = []  # dicts and lists being read, innermost last
    pending_keys: list[Any] = []  # for each, the key read and waiting for its value
    while True:
        event = next_event()
        kind = event.__class__
        if kind is ScalarEvent:
            if event.anchor is not None or event.tag is not None:
                raise NotPlain("an anchor or a tag")
            value = event.value
            if event.implicit[0]:  # plain: its text may stand for a number, a bool, null...
                value = known.get(value, known)
                if value is known:
                    value = scalars.value(loader, event.value)
        elif kind is MappingStartEvent or kind is SequenceStartEvent:
            if event.anchor is not None or event.tag is not None:
                raise NotPlain("an anchor or a tag")
            open_collections.append({} if kind is MappingStartEvent else [])
            pending_keys.append(_KEY_NEXT)
            continue
        elif kind is MappingEndEvent or kind is SequenceEndEvent:
            value = open_collections.pop()
            pending_keys.pop()
        else:
            raise NotPlain("an alias")
        if not open_collections:
            return value
        into = open_collections[-1]
        if into.__class__ is list:
            into.append(value)
        elif pending_keys[-1] is _KEY_NEXT:
            if kind is not ScalarEvent:
                raise NotPlain("a key that is a collection")
            pending_keys[-1] = value
        else:
            into[pending_keys[-1]] = value
            pending_keys[-1] = _KEY_NEXT
