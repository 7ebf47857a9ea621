"""Rollouts that name an analysis template nothing in the repository defines.

A `templateName` typo renders and syncs without complaint; only at run time does the Rollout
stall (Argo Rollouts cannot create the AnalysisRun) or error. Templates that live outside the
checked repository are declared in the check config (`externalTemplates`).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from headway.check.context import CheckContext
from headway.check.findings import Finding, Rule, Severity, finding_at
from headway.check.gates import GateRef, gate_refs
from headway.check.manifest import as_dict, as_list, name_of
from headway.model.yamlload import Document

__all__ = [
    "MISSING_ANALYSIS_TEMPLATE",
    "UNPASSED_TEMPLATE_ARG",
    "check_missing_templates",
    "check_unpassed_args",
]

MISSING_ANALYSIS_TEMPLATE = Rule(
    id="HW212",
    slug="missing-analysis-template",
    severity=Severity.ERROR,
    title="A Rollout names an analysis template that nothing defines",
    rationale="A misspelt templateName passes every render and sync; at run time the "
    "Rollout cannot start its analysis and stalls or errors mid-release.",
    hint="Fix the templateName, add the template to the repository, or list a template "
    "installed by other means under `externalTemplates:` in the check config.",
)

UNPASSED_TEMPLATE_ARG = Rule(
    id="HW213",
    slug="unpassed-template-arg",
    severity=Severity.ERROR,
    title="An analysis template argument with no value that the Rollout never passes",
    rationale="An argument with no value, no valueFrom and no value from the Rollout cannot be "
    "resolved: the controller cannot create the AnalysisRun, and the release stalls or errors "
    "at the gate (often a `stable-hash` arg added for a comparison and never wired).",
    hint="Pass it in the Rollout's analysis `args:` (a pod-template hash with `valueFrom: "
    "{podTemplateHashValue: Stable}` or `Latest`), or give it a `value` in the template.",
)

_KINDS = ("AnalysisTemplate", "ClusterAnalysisTemplate")
_WHERE = {
    "step": "analysis step",
    "background": "background analysis",
    "prePromotion": "prePromotionAnalysis",
    "postPromotion": "postPromotionAnalysis",
}


def _defined_names(ctx: CheckContext, kind: str) -> list[str]:
    return sorted({name_of(d.obj) for d in ctx.objects_of_kind(kind)} - {""})


def _suggestion(ctx: CheckContext, kind: str, name: str) -> str | None:
    other = _KINDS[1] if kind == _KINDS[0] else _KINDS[0]
    if name and name in _defined_names(ctx, other):
        scope = "true" if other == _KINDS[1] else "false (or remove it)"
        return f"{other}/{name} exists: set `clusterScope: {scope}` on this reference."
    close = difflib.get_close_matches(name, _defined_names(ctx, kind), n=1, cutoff=0.6)
    if close:
        return f"Did you mean {kind}/{close[0]}? Fix the templateName."
    return None


def _where(ref: GateRef) -> str:
    label = _WHERE.get(ref.kind, ref.kind)
    if ref.kind == "step":
        label = f"{label} {ref.path[4]}"
    return label


def check_missing_templates(ctx: CheckContext) -> Iterable[Finding]:
    for unit, rollout in ctx.units_of_kind("Rollout"):
        for ref in gate_refs(ctx, unit, rollout):
            if ref.template is not None or ref.template_name in ctx.external_templates:
                continue
            kind = ref.template_kind
            named = f"{kind}/{ref.template_name}" if ref.template_name else f"no {kind}"
            yield finding_at(
                MISSING_ANALYSIS_TEMPLATE,
                rollout,
                path=(*ref.path, "templateName"),
                message=f"Rollout/{rollout.name} names {named} in its {_where(ref)} "
                f"({'.'.join(map(str, ref.path))}), which no object of this repository "
                "defines: at run time the analysis cannot start and the rollout stalls "
                "or errors",
                app=unit.name,
                hint=_suggestion(ctx, kind, ref.template_name),
            )


def _unvalued_args(template: Document) -> list[str]:
    """Template args with neither a `value` nor a `valueFrom`: the caller must pass them."""
    spec = as_dict(as_dict(template.obj).get("spec"))
    return [
        str(arg["name"])
        for arg in map(as_dict, as_list(spec.get("args")))
        if arg.get("name") and arg.get("value") is None and not arg.get("valueFrom")
    ]


def check_unpassed_args(ctx: CheckContext) -> Iterable[Finding]:
    for unit, rollout in ctx.units_of_kind("Rollout"):
        for ref in gate_refs(ctx, unit, rollout):
            if ref.template is None:
                continue
            passed = {str(a.get("name")) for a in ref.args}
            for name in _unvalued_args(ref.template):
                if name in passed:
                    continue
                yield finding_at(
                    UNPASSED_TEMPLATE_ARG,
                    rollout,
                    path=(*ref.path, "templateName"),
                    message=f"{ref.template_kind}/{ref.template_name} declares arg "
                    f"{name!r} with no value, and Rollout/{rollout.name} does not pass it "
                    f"in its {_where(ref)} ({'.'.join(map(str, ref.path[:-2]))}.args): the "
                    "analysis cannot be created and the rollout stalls or errors there",
                    app=unit.name,
                )
