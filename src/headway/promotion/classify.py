"""Classify a change to a target file by its diff, not by its path. Purely computational.

A promotion may skip its environment's approval only when every changed line of the file is
one of the keys the automation writes (the image key, the hotfix nonce, the skip flag) *and*
the pipeline lists that key in the environment's `exempt` allow-list. Anything else in the same
file — an env var, a secret reference, a resource limit, a comment — makes the change a
config change, held at the gate: a path-based exemption ("values-prod.yaml is the bot's file")
would let a hand edit ride along with the bot's.

Two independent looks must both agree before a change is exempt:

* **lines**: each line the text diff touches holds one allowed key and nothing else (or only
  opens a mapping of allowed keys), and on a line changed in place only the value's characters
  differ — a comment edited on the tag's line is a change too;
* **data**: both versions loaded, with the allowed keys taken out, are equal.

Turning the skip-analysis flag on is never exempt, whatever the allow-list says; taking it
off may be (it only gives analysis back).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq

from headway.model.key_paths import KeyPath, as_text, parse_key_path
from headway.model.promotion_pipeline import Environment
from headway.promotion.image_targets import target_document
from headway.promotion.yaml_edits import (
    YamlEditError,
    load_round_trip,
    locate,
    plain_data,
    value_end,
)

__all__ = [
    "ChangeKind",
    "Classification",
    "KeyChange",
    "classify_change",
    "classify_for_environment",
    "config_check",
]

Concrete = tuple[int, tuple[str | int, ...]]  # (document, path with list indices)


class ChangeKind(StrEnum):
    NONE = "none"  # the texts are equal
    EXEMPT = "exempt"  # only allowed automation keys changed
    CONFIG = "config"  # something else changed: held at the gate


@dataclass(frozen=True)
class KeyChange:
    """One changed thing: where, what, and why it is held at the gate ("" when it is not)."""

    line: int  # 1-based, in the new text (in the old one for a removed line)
    key: str  # the key path, or "" for a line that holds no key (a comment, a blank)
    why_held: str = ""

    def describe(self, file: str) -> str:
        what = self.key or "a line with no key"
        return f"{file}:{self.line}: {what}: {self.why_held}"


@dataclass(frozen=True)
class Classification:
    kind: ChangeKind
    changes: tuple[KeyChange, ...]
    file: str

    @property
    def exempt(self) -> bool:
        """True when the change may skip the gate (nothing, or only allowed keys, changed)."""
        return self.kind is not ChangeKind.CONFIG

    @property
    def reason(self) -> str:
        """Why the change is held ("" when it is not): the first three offending changes."""
        held = [change.describe(self.file) for change in self.changes if change.why_held]
        more = f" (and {len(held) - 3} more)" if len(held) > 3 else ""
        return "; ".join(held[:3]) + more


@dataclass(frozen=True)
class _Leaf:
    where: Concrete
    value: Any
    key_line: int  # 0-based
    value_line: int
    value_column: int
    flow: bool  # written inside a flow collection ({...} or [...])


def _walk(node: Any, document: int, path: tuple[str | int, ...]) -> Iterator[_Leaf]:
    flow = bool(getattr(node, "fa", None) and node.fa.flow_style())
    if isinstance(node, CommentedMap):
        for key, child in node.items():
            step = (*path, str(key))
            if isinstance(child, CommentedMap | CommentedSeq) and child:
                yield from _walk(child, document, step)
            else:
                key_line = node.lc.key(key)[0]
                line, column = node.lc.value(key)
                yield _Leaf((document, step), child, key_line, line, column, flow)
    elif isinstance(node, CommentedSeq):
        for index, child in enumerate(node):
            if isinstance(child, CommentedMap | CommentedSeq) and child:
                yield from _walk(child, document, (*path, index))
            else:
                line, column = node.lc.item(index)
                yield _Leaf((document, (*path, index)), child, line, line, column, flow)


def _parents(
    node: Any, document: int, path: tuple[str | int, ...]
) -> Iterator[tuple[int, Concrete]]:
    """(line, path) of each mapping key whose value is a non-empty collection."""
    if isinstance(node, CommentedMap):
        for key, child in node.items():
            if isinstance(child, CommentedMap | CommentedSeq) and child:
                yield node.lc.key(key)[0], (document, (*path, str(key)))
                yield from _parents(child, document, (*path, str(key)))
    elif isinstance(node, CommentedSeq):
        for index, child in enumerate(node):
            yield from _parents(child, document, (*path, index))


def _concrete(document: Any, key: KeyPath) -> tuple[str | int, ...] | None:
    steps: list[str | int] = []
    for depth in range(1, len(key.parts) + 1):
        found = locate(document, KeyPath(key.parts[:depth]))
        if found is None:
            return None
        steps.append(found.step)
    return tuple(steps)


class _Side:
    """One version of the file: its lines, what each line holds, and its allowed keys."""

    def __init__(self, text: str, file: str, allowed: Sequence[KeyPath], document: int) -> None:
        documents = load_round_trip(text, file)
        self.lines = text.splitlines()
        self.data = [plain_data(doc) for doc in documents]
        self.leaves = {
            leaf.where: leaf
            for index, doc in enumerate(documents)
            for leaf in _walk(doc, index, ())
        }
        self.parents = {
            line: where
            for index, doc in enumerate(documents)
            for line, where in _parents(doc, index, ())
        }
        self.allowed: dict[Concrete, str] = {}
        for key in allowed:
            steps = _concrete(documents[document], key) if document < len(documents) else None
            if steps is not None:
                self.allowed[(document, steps)] = str(key)
        self.by_line: dict[int, list[_Leaf]] = {}
        for leaf in self.leaves.values():
            for line in {leaf.key_line, leaf.value_line}:
                self.by_line.setdefault(line, []).append(leaf)

    def key_at(self, line: int) -> str:
        leaves = self.by_line.get(line, [])
        if len(leaves) == 1:
            return self.allowed.get(leaves[0].where) or as_text(leaves[0].where[1])
        parent = self.parents.get(line)
        return as_text(parent[1]) if parent is not None else ""

    def allowed_line(self, line: int) -> bool:
        """The line holds one allowed key and nothing else, or only opens a mapping all of
        whose keys are allowed (a parent the automation added along with its key)."""
        leaves, parent = self.by_line.get(line, []), self.parents.get(line)
        if len(leaves) == 1 and parent is None:
            leaf = leaves[0]
            return leaf.where in self.allowed and leaf.key_line == leaf.value_line
        if parent is not None and not leaves:
            under = [where for where in self.leaves if _inside(where, parent)]
            return bool(under) and all(where in self.allowed for where in under)
        return False

    def skeleton(self, line: int) -> str:
        """The line without its value's characters."""
        [leaf] = self.by_line[line]
        text = self.lines[line]
        return text[: leaf.value_column] + text[value_end(text, leaf.value_column, leaf.flow) :]


def _inside(where: Concrete, parent: Concrete) -> bool:
    return where[0] == parent[0] and where[1][: len(parent[1])] == parent[1]


def _same_key_in_place(old: _Side, new: _Side, old_line: int, new_line: int) -> bool:
    if not (old.allowed_line(old_line) and new.allowed_line(new_line)):
        return False
    if len(old.by_line.get(old_line, [])) != 1 or len(new.by_line.get(new_line, [])) != 1:
        return False  # a parent line changed in place: not a value edit
    same_key = old.by_line[old_line][0].where == new.by_line[new_line][0].where
    return same_key and old.skeleton(old_line) == new.skeleton(new_line)


def _line_changes(old: _Side, new: _Side) -> Iterator[KeyChange]:
    """Every line the text diff touches, each held unless it is an allowed key's line."""
    matcher = difflib.SequenceMatcher(a=old.lines, b=new.lines, autojunk=False)
    for tag, a1, a2, b1, b2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if tag == "replace" and a2 - a1 == b2 - b1:
            for i, j in zip(range(a1, a2), range(b1, b2), strict=True):
                ok = _same_key_in_place(old, new, i, j)
                yield KeyChange(j + 1, new.key_at(j), "" if ok else _why(new, j, "changed"))
            continue
        for i in range(a1, a2):
            ok = old.allowed_line(i)
            yield KeyChange(i + 1, old.key_at(i), "" if ok else _why(old, i, "removed"))
        for j in range(b1, b2):
            ok = new.allowed_line(j)
            yield KeyChange(j + 1, new.key_at(j), "" if ok else _why(new, j, "added"))


def _why(side: _Side, line: int, verb: str) -> str:
    key = side.key_at(line)
    if not key:
        return f"{verb}; a line holding no key (a comment, a blank) is not the automation's"
    if any(leaf.where in side.allowed for leaf in side.by_line.get(line, [])):
        return f"{verb} beside the allowed key on the same line"
    return f"{verb}; not a key the automation writes and the environment exempts"


def _without(data: list[Any], paths: Sequence[Concrete]) -> list[Any]:
    """A copy of loaded data without the allowed keys (and the mappings they leave empty)."""
    copied: list[Any] = _copy(data)
    for document, path in sorted(paths, key=lambda where: -len(where[1])):
        chain: list[Any] = [copied[document]]
        for part in path[:-1]:
            chain.append(chain[-1][part])
        if isinstance(chain[-1], dict):
            chain[-1].pop(path[-1], None)
        for depth in range(len(path) - 1, 0, -1):
            if chain[depth] == {} and isinstance(chain[depth - 1], dict):
                chain[depth - 1].pop(path[depth - 1], None)
    return copied


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _copy(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copy(item) for item in value]
    return value


def _data_changes(old: _Side, new: _Side) -> Iterator[KeyChange]:
    """Held changes the line look could miss: the data, allowed keys aside, must be equal."""
    if _without(old.data, list(old.allowed)) == _without(new.data, list(new.allowed)):
        return
    for where in sorted(set(old.leaves) | set(new.leaves), key=str):
        if where in old.allowed or where in new.allowed:
            continue
        before, after = old.leaves.get(where), new.leaves.get(where)
        if before is None or after is None or before.value != after.value:
            shown = after if after is not None else before
            line = shown.value_line + 1 if shown is not None else 0
            yield KeyChange(line, as_text(where[1]), "its value differs")
            return
    yield KeyChange(0, "", "the loaded data differs outside the allowed keys")


def _skip_flags_on(old: _Side, new: _Side, skip_flags: Sequence[KeyPath]) -> Iterator[KeyChange]:
    texts = {str(key) for key in skip_flags}
    for where, text in new.allowed.items():
        if text not in texts or not new.leaves[where].value:
            continue
        before = old.leaves.get(where)
        if before is None or not before.value:
            line = new.leaves[where].value_line + 1
            yield KeyChange(line, text, "turns the analysis-skip flag on; that is never exempt")


def classify_change(
    old: str,
    new: str,
    *,
    automation_keys: Sequence[KeyPath],
    exempt_keys: Sequence[KeyPath],
    skip_flags: Sequence[KeyPath] = (),
    document: int = 0,
    file: str,
) -> Classification:
    """Whether the change from `old` to `new` touches only allowed keys.

    Allowed: in both `automation_keys` (what Headway writes) and `exempt_keys` (what the
    environment lets skip its gate), in `document` of the file. `skip_flags` are keys whose
    turning on is held whatever the lists say. Text that is not YAML is a config change.
    """
    if old == new:
        return Classification(ChangeKind.NONE, (), file)
    exempt_texts = {str(key) for key in exempt_keys}
    allowed = [key for key in automation_keys if str(key) in exempt_texts]
    try:
        before = _Side(old, file, allowed, document)
        after = _Side(new, file, allowed, document)
    except YamlEditError as err:
        return Classification(ChangeKind.CONFIG, (KeyChange(0, "", str(err)),), file)
    changes = [*_line_changes(before, after), *_skip_flags_on(before, after, skip_flags)]
    held = any(change.why_held for change in changes)
    if not held:  # the backstop: what the lines showed must also be all the data says
        changes.extend(_data_changes(before, after))
        held = any(change.why_held for change in changes)
    return Classification(ChangeKind.CONFIG if held else ChangeKind.EXEMPT, tuple(changes), file)


def classify_for_environment(old: str, new: str, env: Environment, *, file: str) -> Classification:
    """`classify_change` with the environment's keys: what Headway writes there, what its gate
    exempts, its skip flag, and the document of a manifest target."""
    try:
        document = target_document(new, env.target, file=file)
    except YamlEditError as err:
        return Classification(ChangeKind.CONFIG, (KeyChange(0, "", str(err)),), file)
    skip = () if env.hotfix is None else (parse_key_path(env.hotfix.skip_analysis_key),)
    return classify_change(
        old,
        new,
        automation_keys=env.automation_keys,
        exempt_keys=env.exempt_keys,
        skip_flags=skip,
        document=document,
        file=file,
    )


def config_check(env: Environment) -> Callable[[str, str], str]:
    """(the file at the last promotion, the file now) -> why that is a config change, or ""."""
    file = env.target.file

    def reason(old: str, new: str) -> str:
        return classify_for_environment(old, new, env, file=file).reason

    return reason
