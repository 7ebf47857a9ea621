"""Diffing a whole application, and RespectIgnoreDifferences for the objects to apply."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from headway.diff.compare import ResourceDiff, diff_resource
from headway.diff.ignore import CompiledRule, unmatched_rules
from headway.diff.paths import ABSENT, delete_paths, get_path, set_path
from headway.model.argocd_diff import CompareOptions
from headway.model.obj import Obj

__all__ = ["AppDiff", "ObjectKey", "apply_ignore_rules_to_desired", "diff_objects", "object_key"]

ObjectKey = tuple[str, str, str, str]  # group, kind, namespace, name


def object_key(obj: Obj, *, default_namespace: str = "") -> ObjectKey:
    meta = obj.get("metadata") or {}
    group = str(obj.get("apiVersion", "")).rpartition("/")[0]
    namespace = str(meta.get("namespace") or default_namespace)
    return group, str(obj.get("kind", "")), namespace, str(meta.get("name", ""))


@dataclass(frozen=True)
class AppDiff:
    resources: Mapping[ObjectKey, ResourceDiff]
    unmatched: tuple[CompiledRule, ...] = ()

    @property
    def modified(self) -> tuple[ObjectKey, ...]:
        return tuple(k for k, d in self.resources.items() if d.modified)

    def warnings(self) -> tuple[str, ...]:
        """One line per ignoreDifferences entry that matched no resource of the app."""
        return tuple(_unmatched_warning(rule) for rule in self.unmatched)


def _unmatched_warning(rule: CompiledRule) -> str:
    entry = rule.entry
    hint = ""
    if not entry.group and entry.kind not in ("", "*"):
        hint = " (an entry without group matches only the core group; did you forget group?)"
    who = f"group={entry.group!r} kind={entry.kind!r}"
    return f"ignoreDifferences[{rule.index}] ({who}) matches no resource of this app{hint}"


def diff_objects(
    desired: Sequence[Obj],
    live: Sequence[Obj],
    *,
    rules: Sequence[CompiledRule] = (),
    namespace: str = "",
    options: CompareOptions | None = None,
) -> AppDiff:
    """Every desired object against its live counterpart (missing ones are modified), and
    live objects no longer desired (modified: they need pruning). `options` are argocd-cm's
    compare options (Argo CD's defaults when None)."""
    compare = options or CompareOptions()
    live_by_key = {object_key(o, default_namespace=namespace): o for o in live}
    results: dict[ObjectKey, ResourceDiff] = {}
    for obj in desired:
        key = object_key(obj, default_namespace=namespace)
        results[key] = diff_resource(obj, live_by_key.get(key), rules, compare)
    for key, obj in live_by_key.items():
        if key not in results:
            results[key] = diff_resource(None, obj, rules, compare)
    unmatched = unmatched_rules(rules, [*desired, *live])
    return AppDiff(results, tuple(unmatched))


def apply_ignore_rules_to_desired(
    desired: Obj, live: Mapping[str, Any] | None, rules: Sequence[CompiledRule]
) -> dict[str, Any]:
    """RespectIgnoreDifferences=true: the object to apply, with every ignored field taking
    its live value (or dropped when live has none), so a sync never resets what the rules
    hand to someone else. Nothing changes on creation (no live object)."""
    out = dict(desired)
    if live is None:
        return out
    for rule in rules:
        if not rule.matches(desired):
            continue
        from_live = rule.paths(live, owners_from=live)
        for path in sorted(from_live, key=len):
            if get_path(out, path[:-1]) is not ABSENT:
                out = set_path(out, path, get_path(live, path))
        only_desired = rule.paths(out, owners_from=live) - from_live
        out = delete_paths(out, only_desired)
    return out
