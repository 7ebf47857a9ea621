"""The system-wide ignore rules of the repository's `argocd-cm` ConfigMaps, for the check rules.

Read by `model.argocd_diff.diff_customizations`, the reader the controller uses, and turned
into entries shaped like an Application's `ignoreDifferences` items, so that the rules asking
"does some ignore rule cover this field?" count them too. A system rule's group and kind are
globs (`*/*` for `all`); it has no name or namespace.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, cast

from headway.check.context import CheckContext
from headway.check.manifest import as_dict, group_of, name_of
from headway.check.system_ignore_risk import managers_apply
from headway.model.argocd_cm import ARGOCD_CM_NAME
from headway.model.yamlload import Document

if TYPE_CHECKING:  # imported where an argocd-cm is met: it brings jq and the Application model
    from headway.model.argocd_diff import CompareOptions, SystemIgnore

__all__ = ["SystemEntry", "compare_options", "system_entries", "system_rule_errors"]


@dataclass(frozen=True)
class SystemEntry:
    """One system-wide rule: the ConfigMap it is in, its data key, and the rule as an
    `ignoreDifferences` item (`jsonPointers`, `jqPathExpressions`, `managedFieldsManagers`)."""

    doc: Document
    rule: SystemIgnore
    entry: dict[str, Any]

    def matches(self, target: Document) -> bool:
        """Whether the rule applies to `target` (group and kind globs, as Argo CD's)."""
        group = group_of(as_dict(target.obj).get("apiVersion"))
        wanted = self.rule.entry
        group_ok = fnmatch.fnmatchcase(group, wanted.group) if wanted.group else group == ""
        return group_ok and fnmatch.fnmatchcase(target.kind, wanted.kind)


def system_entries(ctx: CheckContext) -> Sequence[SystemEntry]:
    """The rules of every `argocd-cm` ConfigMap in the repository (found once per run)."""
    return _read(ctx)[0]


def system_rule_errors(ctx: CheckContext) -> Sequence[str]:
    """The malformed rules `system_entries` leaves out, as `file:line: key: what is wrong`
    (with one, the controller compares no Application at all)."""
    return _read(ctx)[1]


def _read(ctx: CheckContext) -> tuple[tuple[SystemEntry, ...], tuple[str, ...]]:
    key = ("argocd_cm_system_entries",)
    if key not in ctx.derived:
        ctx.derived[key] = _entries(ctx)
    return cast(tuple[tuple[SystemEntry, ...], tuple[str, ...]], ctx.derived[key])


def _entries(ctx: CheckContext) -> tuple[tuple[SystemEntry, ...], tuple[str, ...]]:
    found: list[SystemEntry] = []
    errors: list[str] = []
    for doc in ctx.objects_of_kind("ConfigMap"):
        data = as_dict(as_dict(doc.obj).get("data"))
        if name_of(doc.obj) != ARGOCD_CM_NAME or not data:
            continue
        from headway.model.argocd_diff import diff_customizations

        read = diff_customizations(data)
        errors.extend(
            f"{doc.file}:{doc.line}: {p.key}: {p.message}" for p in read.problems if p.error
        )
        for rule in read.ignores:
            entry = {
                "jsonPointers": list(rule.entry.json_pointers),
                "jqPathExpressions": list(rule.entry.jq_path_expressions),
                # managers apply only where Argo CD's literal lookup finds them
                "managedFieldsManagers": list(rule.entry.managed_fields_managers)
                if managers_apply(rule)
                else [],
            }
            found.append(SystemEntry(doc, rule, entry))
    return tuple(found), tuple(errors)


def compare_options(ctx: CheckContext) -> CompareOptions:
    """The `resource.compareoptions` of the repository's `argocd-cm` ConfigMaps that set it
    (Argo CD's defaults when none does). Where they disagree (one per environment, say), the
    options that compare the most: a change either controller would report is shown."""
    from headway.model.argocd_diff import COMPARE_OPTIONS_KEY, CompareOptions, diff_customizations

    found = {
        diff_customizations(data).compare
        for doc in ctx.objects_of_kind("ConfigMap")
        if name_of(doc.obj) == ARGOCD_CM_NAME
        and COMPARE_OPTIONS_KEY in (data := as_dict(as_dict(doc.obj).get("data")))
    }
    if len(found) <= 1:
        return next(iter(found), CompareOptions())
    return _comparing_most(tuple(found))


def _comparing_most(options: Sequence[CompareOptions]) -> CompareOptions:
    """Status compared where any of `options` compares it; aggregated roles' rules left
    out only where all of them leave them out."""
    from headway.model.argocd_diff import StatusScope

    scopes = {o.ignore_status for o in options}
    scope = next(s for s in (StatusScope.NONE, StatusScope.CRD, StatusScope.ALL) if s in scopes)
    ignore_roles = all(o.ignore_aggregated_roles for o in options)
    return replace(options[0], ignore_status=scope, ignore_aggregated_roles=ignore_roles)
