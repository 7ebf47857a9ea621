"""`ignoreApplicationDifferences`: fields of generated Applications the set leaves as they
are live. Pure.

Each entry (optionally for one Application `name`) lists `jsonPointers` and
`jqPathExpressions` into the Application (`/spec/source/targetRevision`,
`.spec.syncPolicy.automated`). Like Argo CD, the set then never writes those fields of an
existing Application: the live value is kept (or its absence), so a hand-made change there
survives, and a difference there alone is no update.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import jq

from headway.diff.paths import (
    ABSENT,
    Path,
    delete_paths,
    get_path,
    parse_pointer,
    resolve_pointer,
    set_path,
)

__all__ = ["IgnoreError", "IgnoreRule", "compile_ignores", "keep_ignored"]


class IgnoreError(ValueError):
    """An entry that cannot be used; names the field."""


@dataclass(frozen=True)
class IgnoreRule:
    name: str
    pointers: tuple[tuple[str, ...], ...]
    programs: tuple[Any, ...]

    def paths(self, obj: Mapping[str, Any]) -> set[Path]:
        found: set[Path] = set()
        for tokens in self.pointers:
            path = resolve_pointer(obj, tokens)
            if path:
                found.add(path)
        for program in self.programs:
            try:
                result = program.input_value(obj).first()
            except ValueError:
                continue  # the expression walks through a field this object lacks
            found.update(tuple(p) for p in result or [] if p)
        return found


def compile_ignores(entries: Any) -> tuple[IgnoreRule, ...]:
    """The set's `ignoreApplicationDifferences`, compiled once; `IgnoreError` names a bad one."""
    rules: list[IgnoreRule] = []
    for index, entry in enumerate(entries if isinstance(entries, list) else []):
        where = f"spec.ignoreApplicationDifferences[{index}]"
        if not isinstance(entry, Mapping):
            raise IgnoreError(f"{where}: must be a mapping")
        try:
            pointers = tuple(parse_pointer(str(p)) for p in entry.get("jsonPointers") or [])
        except ValueError as err:
            raise IgnoreError(f"{where}.jsonPointers: {err}") from None
        programs = []
        for n, expression in enumerate(entry.get("jqPathExpressions") or []):
            try:
                programs.append(jq.compile(f"[path({expression})]"))
            except ValueError as err:
                raise IgnoreError(f"{where}.jqPathExpressions[{n}]: {err}") from None
        rules.append(IgnoreRule(str(entry.get("name") or ""), pointers, tuple(programs)))
    return tuple(rules)


def keep_ignored(
    generated: Mapping[str, Any], live: Mapping[str, Any], rules: Sequence[IgnoreRule]
) -> dict[str, Any]:
    """`generated` with every ignored field as it is in `live` (removed where live lacks it)."""
    name = str((generated.get("metadata") or {}).get("name") or "")
    out: dict[str, Any] = dict(generated)
    for rule in rules:
        if rule.name and rule.name != name:
            continue
        for path in sorted(rule.paths(out) | rule.paths(live), key=len, reverse=True):
            value = get_path(live, path)
            out = delete_paths(out, [path]) if value is ABSENT else set_path(out, path, value)
    return out
