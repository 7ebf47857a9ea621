"""`ignoreDifferences`: which resources an entry applies to, and the paths it ignores.

Matching is Argo CD's: `group` and `kind` are globs (`*`), and an entry without `group`
matches only the core group "" (so `kind: Deployment` alone matches nothing - Headway
reports such entries); `name` and `namespace`, when set, must be equal. Each entry's
`jsonPointers` (RFC 6901), `jqPathExpressions` (compiled once) and `managedFieldsManagers`
turn into concrete paths per object.

System-wide rules from argocd-cm (`compile_system_rules`) are added to the Application's
own, as Argo CD adds them: pointers and jq expressions match by the rule key's group and
kind globs; managed-field managers only where the key is literally `<group>/<kind>` of the
object or `*/*` (Argo CD looks them up by that string). They never count as "matches
nothing": a system rule is written for every application, not this one.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import jq

from headway.diff import managed_fields
from headway.diff.paths import ABSENT, Path, get_path, parse_pointer, resolve_pointer
from headway.model.application import IgnoreDifferences
from headway.model.argocd_diff import ALL_OVERRIDE, SystemIgnore

__all__ = [
    "CompiledRule",
    "IgnoreRuleError",
    "compile_rules",
    "compile_system_rules",
    "unmatched_rules",
]


class IgnoreRuleError(ValueError):
    """An entry that cannot be used (bad pointer or jq expression), naming the entry."""


@dataclass(frozen=True)
class CompiledRule:
    entry: IgnoreDifferences
    index: int
    pointers: tuple[tuple[str, ...], ...]
    jq_programs: tuple[Any, ...]
    # "": the Application's spec.ignoreDifferences[index]; else the argocd-cm key.
    origin: str = ""
    # Matched by the literal `<group>/<kind>` (or `*/*`), not by glob: Argo CD's lookup of
    # system-wide managed-field managers.
    literal_group_kind: bool = False

    def matches(self, obj: Mapping[str, Any]) -> bool:
        group = str(obj.get("apiVersion", "")).rpartition("/")[0]
        meta = obj.get("metadata") or {}
        entry = self.entry
        if self.literal_group_kind:
            wanted = f"{entry.group}/{entry.kind}"
            return wanted in (ALL_OVERRIDE, f"{group}/{obj.get('kind', '')}")
        return (
            _glob(entry.group, group)
            and _glob(entry.kind, str(obj.get("kind", "")))
            and (not entry.name or entry.name == meta.get("name"))
            and (not entry.namespace or entry.namespace == meta.get("namespace"))
        )

    def paths(self, obj: Any, *, owners_from: Mapping[str, Any] | None = None) -> set[Path]:
        """Concrete paths this entry ignores in `obj`; managed-field ownership is read from
        `owners_from` (the live object), since only live objects carry managedFields."""
        found: set[Path] = set()
        for tokens in self.pointers:
            path = resolve_pointer(obj, tokens)
            if path is not None:
                found.add(path)
        for program in self.jq_programs:
            found.update(_jq_paths(program, obj))
        if self.entry.managed_fields_managers and owners_from is not None:
            raw = (owners_from.get("metadata") or {}).get("managedFields")
            owners = managed_fields.decode_owners(raw)
            for element_path in managed_fields.owned_paths(
                owners, self.entry.managed_fields_managers
            ):
                path = managed_fields.resolve_element_path(obj, element_path)
                if path is not None and path:
                    found.add(path)
        return found


def _glob(pattern: str, value: str) -> bool:
    return fnmatch.fnmatchcase(value, pattern) if pattern else value == ""


def _jq_paths(program: Any, obj: Any) -> list[Path]:
    try:
        result = program.input_value(obj).first()
    except ValueError:
        return []  # e.g. iterating over a field this object does not have
    paths = []
    for raw in result or []:
        path = tuple(raw)
        if get_path(obj, path) is not ABSENT:
            paths.append(path)
    return paths


def compile_rules(entries: Sequence[IgnoreDifferences]) -> tuple[CompiledRule, ...]:
    """Compile every entry once; a bad pointer or expression raises IgnoreRuleError."""
    return tuple(_compile(i, entry) for i, entry in enumerate(entries))


def compile_system_rules(ignores: Sequence[SystemIgnore]) -> tuple[CompiledRule, ...]:
    """argocd-cm's system-wide rules: one rule for a key's pointers and jq expressions
    (glob match) and one for its managers (literal match, and none when Argo CD's lookup
    can never find them). A bad pointer or expression raises IgnoreRuleError naming the key."""
    compiled: list[CompiledRule] = []
    for index, ignore in enumerate(ignores):
        entry = ignore.entry
        paths = replace(entry, managed_fields_managers=())
        if paths.json_pointers or paths.jq_path_expressions:
            compiled.append(replace(_compile(index, paths, where=ignore.key), origin=ignore.key))
        if entry.managed_fields_managers and ignore.managers_by_literal_key:
            managers = replace(entry, json_pointers=(), jq_path_expressions=())
            rule = CompiledRule(managers, index, (), (), ignore.key, literal_group_kind=True)
            compiled.append(rule)
    return tuple(compiled)


def _compile(index: int, entry: IgnoreDifferences, *, where: str = "") -> CompiledRule:
    where = where or f"ignoreDifferences[{index}]"
    try:
        pointers = tuple(parse_pointer(p) for p in entry.json_pointers)
    except ValueError as err:
        raise IgnoreRuleError(f"{where}.jsonPointers: {err}") from err
    programs = []
    for n, expression in enumerate(entry.jq_path_expressions):
        try:
            programs.append(jq.compile(f"[path({expression})]"))
        except ValueError as err:
            raise IgnoreRuleError(f"{where}.jqPathExpressions[{n}]: {err}") from err
    return CompiledRule(entry, index, pointers, tuple(programs))


def unmatched_rules(
    rules: Iterable[CompiledRule], objects: Iterable[Mapping[str, Any]]
) -> list[CompiledRule]:
    """The Application's own entries that match none of its resources - usually a missing
    `group` (system-wide rules are not the app's to fix)."""
    pending = [rule for rule in rules if not rule.origin]
    for obj in objects:
        pending = [rule for rule in pending if not rule.matches(obj)]
        if not pending:
            break
    return pending
