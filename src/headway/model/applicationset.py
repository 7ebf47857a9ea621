"""Argo CD `ApplicationSet`: the field table `headway validate` checks.

The generators and the template are checked by rendering them (`headway.appset`); here only
their shape and the set's own settings: template options, sync policy, strategy.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from headway.model import k8s
from headway.model import schema as s
from headway.model.diagnostics import Diagnostic
from headway.model.yamlload import Document

__all__ = ["APPLICATION_SET_SPEC", "parse_application_set"]

_OPTIONS = ("missingkey=default", "missingkey=invalid", "missingkey=zero", "missingkey=error")


def _options(spec: Mapping[str, Any], path: s.Path, report: s.Reporter) -> None:
    for index, option in enumerate(spec.get("goTemplateOptions") or []):
        if option not in _OPTIONS:
            report.error(
                (*path, "goTemplateOptions", index),
                f"{s.describe(option)} is not a Go template option; "
                f"use one of: {', '.join(_OPTIONS)}",
            )


def _template_or_patch(spec: Mapping[str, Any], path: s.Path, report: s.Reporter) -> None:
    if not spec.get("template") and not spec.get("templatePatch"):
        report.error(path, "an ApplicationSet needs a template (or a templatePatch)")


_IGNORE = s.Schema(
    "ApplicationSetResourceIgnoreDifferences",
    (
        s.Field("name", s.STR),
        s.Field("jsonPointers", s.STRING_LIST),
        s.Field("jqPathExpressions", s.STRING_LIST),
    ),
)
_EXPRESSION = s.Schema(
    "ApplicationMatchExpression",
    (
        s.Field("key", s.STR, required=True),
        s.Field("operator", s.Enum(("In", "NotIn")), required=True),
        s.Field("values", s.STRING_LIST),
    ),
)
_STEP = s.Schema(
    "ApplicationSetRolloutStep",
    (
        s.Field("matchExpressions", s.ListOf(s.Obj(_EXPRESSION))),
        s.Field("maxUpdate", s.INT_OR_PERCENT),
    ),
)
_STRATEGY = s.Schema(
    "ApplicationSetStrategy",
    (
        s.Field("type", s.Enum(("AllAtOnce", "RollingSync"))),
        s.Field(
            "rollingSync",
            s.Obj(
                s.Schema(
                    "ApplicationSetRolloutStrategy", (s.Field("steps", s.ListOf(s.Obj(_STEP))),)
                )
            ),
        ),
        s.Field("deletionOrder", s.Enum(("AllAtOnce", "Reverse"))),
    ),
)
_SYNC_POLICY = s.Schema(
    "ApplicationSetSyncPolicy",
    (
        s.Field("preserveResourcesOnDeletion", s.BOOL),
        s.Field(
            "applicationsSync", s.Enum(("create-only", "create-update", "create-delete", "sync"))
        ),
    ),
)
APPLICATION_SET_SPEC = s.Schema(
    "ApplicationSetSpec",
    (
        s.Field("generators", s.ListOf(s.AnyValue(mapping=True)), required=True),
        s.Field("template", s.AnyValue(mapping=True)),
        s.Field("templatePatch", s.STR),
        s.Field("goTemplate", s.BOOL),
        s.Field("goTemplateOptions", s.STRING_LIST),
        s.Field("syncPolicy", s.Obj(_SYNC_POLICY)),
        s.Field("strategy", s.Obj(_STRATEGY)),
        s.Field(
            "preservedFields",
            s.Obj(
                s.Schema(
                    "ApplicationPreservedFields",
                    (s.Field("annotations", s.STRING_LIST), s.Field("labels", s.STRING_LIST)),
                )
            ),
        ),
        s.Field("ignoreApplicationDifferences", s.ListOf(s.Obj(_IGNORE))),
        s.Field("applyNestedSelectors", s.BOOL),
    ),
    checks=(_options, _template_or_patch),
)


def parse_application_set(document: Document) -> tuple[Mapping[str, Any] | None, list[Diagnostic]]:
    """The set's spec (as a mapping) and its diagnostics; None on any error."""
    parts, diagnostics = k8s.parse_typed(document, APPLICATION_SET_SPEC)
    if parts is None:
        return None, diagnostics
    return document.obj, diagnostics
