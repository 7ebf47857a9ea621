"""Building Python objects from a composed YAML node tree, faster than PyYAML's constructor.

PyYAML's `SafeConstructor` spends most of a manifest's load in per-node bookkeeping that plain
Kubernetes YAML never needs: a memo of every node built (for aliases), generators for
recursive structures, merge-key flattening and a method lookup per tag. `build_object` builds
the common shapes (maps, sequences, and the scalars the safe resolver assigns) itself, with
the very constructors the given loader would call for each scalar tag, and hands everything
else back (`NotPlain`) so that the caller runs PyYAML's constructor instead. It refuses to
build a node it has already built: a repeated node means an alias, which the caller must
first check for alias bombs (`yamlload._alias_problem`).

`remembering_resolver` makes the fast path's loader remember the resolver's answers: a plain
scalar's tag depends only on its text, and manifests repeat the same keys and values thousands
of times (answers are kept for short texts only, so memory stays bounded).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import yaml
from yaml import MappingNode, ScalarNode, SequenceNode

__all__ = ["NotPlain", "build_object", "remembering_resolver"]

_STR = "tag:yaml.org,2002:str"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
# Scalar tags whose constructor returns an immutable value from the text alone; `binary`,
# `merge` (`<<`), `value` (`=`) and any other tag go to PyYAML's constructor.
SCALAR_TAGS = tuple(
    f"tag:yaml.org,2002:{name}" for name in ("null", "bool", "int", "float", "timestamp")
)
# Resolver answers kept for scalars up to this many characters, and at most this many answers.
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


def remembering_resolver(
    resolve: Callable[[Any, type[yaml.Node], Any, Any], str],
) -> Callable[[Any, type[yaml.Node], Any, Any], str]:
    """`resolve` (a loader's `resolve` method) remembering its answers for short scalars.

    The safe resolver has no path resolvers, so a scalar's tag depends only on its text and
    its (plain, quoted) implicit flags: the answer may be reused for any document."""
    answers: dict[tuple[str, Any], str] = {}

    def remembered(loader: Any, kind: type[yaml.Node], value: Any, implicit: Any) -> str:
        if kind is not ScalarNode or len(value) > _REMEMBERED_TEXT:
            return resolve(loader, kind, value, implicit)
        key = (value, implicit)
        tag = answers.get(key)
        if tag is None:
            if len(answers) >= _REMEMBERED_ANSWERS:
                answers.clear()
            tag = answers[key] = resolve(loader, kind, value, implicit)
        return tag

    return remembered
