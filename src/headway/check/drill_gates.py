"""Would this analysis ever fire? Answered with numbers by `headway drill`'s engine.

The check layer sits below the drill (docs/architecture.md), so the engine is handed in:
`CheckContext.drill` is a function from a Rollout and the templates it names to a
`DrillVerdict` (the CLI's loader supplies `headway.cli.check_drill.drill_gate`). Each Rollout
is replayed on one standard scenario (`drill:` in the check config), a bounded number of times
with a fixed seed, so a finding is the same on every run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from headway.check.context import AppUnit, CheckContext
from headway.check.drill_engine import DrillSettings, DrillVerdict
from headway.check.findings import Finding, Rule, Severity, finding_at
from headway.check.gates import GateRef, canary_of, gate_refs, metrics_of
from headway.model.yamlload import Document

__all__ = [
    "ANALYSIS_FALSE_ABORTS",
    "ANALYSIS_NEVER_FIRES",
    "check_drill_gates",
]

_JUDGE = (
    "or gate on the judge (`headway.dev/judge`, docs/judge.md), which compares canary "
    "against stable on the same traffic and stops as soon as the evidence allows."
)

ANALYSIS_NEVER_FIRES = Rule(
    id="HW214",
    slug="analysis-never-fires",
    severity=Severity.WARNING,
    title="A canary analysis that the drill shows never aborts a bad release",
    rationale="Seed 003: a template whose queries read the whole service sees a canary-only "
    "error shift diluted under its threshold, and a metric with an interval and no count never "
    "ends; either way the bad release reads Healthy while it serves errors.",
    hint='Scope the query to the canary (`rollouts_pod_template_hash="{{args.canary-hash}}"` '
    "with `valueFrom: {podTemplateHashValue: Latest}`), give interval metrics a `count`, " + _JUDGE,
)
ANALYSIS_FALSE_ABORTS = Rule(
    id="HW215",
    slug="analysis-false-aborts",
    severity=Severity.WARNING,
    title="A canary analysis that the drill shows aborting identical versions too often",
    rationale="An analysis that aborts good releases trains people to override it; a bad "
    "moment of the whole service is not a bad canary.",
    hint="Loosen the threshold or the failureLimit, lengthen the query's window, " + _JUDGE,
)


def _percent(share: float) -> str:
    return f"{share:.0%}"


def _numbers(verdict: DrillVerdict, settings: DrillSettings) -> str:
    median = "never" if verdict.median_abort is None else f"{verdict.median_abort:.0f} s"
    return (
        f"detected {_percent(verdict.detected)} (paused {_percent(verdict.paused)}, promoted "
        f"{_percent(verdict.promoted)}, still measuring at the {settings.horizon} horizon "
        f"{_percent(verdict.undecided)}), median time to abort {median}, "
        f"{verdict.bad_requests:.0f} requests served by the bad version, false aborts "
        f"{_percent(verdict.false_aborts)} on an identical version"
    )


def _endless_metrics(templates: Mapping[str, Document]) -> list[str]:
    return [
        str(metric.get("name"))
        for template in templates.values()
        for _index, metric in metrics_of(template)
        if metric.get("interval") and metric.get("count") in (None, 0)
    ]


def _never_fires_hint(verdict: DrillVerdict, templates: Mapping[str, Document]) -> str:
    fixes = []
    if verdict.whole_service_metrics:
        named = ", ".join(repr(m) for m in verdict.whole_service_metrics)
        fixes.append(
            f"scope {named} to the canary's pod-template hash (a canary-only shift is "
            "diluted in the whole service's numbers)"
        )
    endless = _endless_metrics(templates)
    if endless and verdict.undecided > 0:
        fixes.append(
            f"set `count` on {', '.join(repr(m) for m in endless)} (an interval with "
            "no count measures forever and never lets the step end)"
        )
    if not fixes:
        return ANALYSIS_NEVER_FIRES.hint
    return "; ".join(fixes) + "; " + _JUDGE


def _templates_of(refs: list[GateRef]) -> dict[str, Document] | None:
    """The templates a Rollout's canary names, or None when one is missing (HW212 says so)."""
    found: dict[str, Document] = {}
    for ref in refs:
        if ref.template is None:
            return None
        found[ref.template_name] = ref.template
    return found


def _drill_one(ctx: CheckContext, unit: AppUnit, rollout: Document) -> Iterable[Finding]:
    assert ctx.drill is not None
    refs = [r for r in gate_refs(ctx, unit, rollout) if r.kind in ("step", "background")]
    templates = _templates_of(refs)
    if not refs or templates is None:
        return
    settings = ctx.drill_settings
    verdict = ctx.drill(rollout, templates, settings, parses=ctx.parses)
    where = (*refs[0].path, "templateName")
    names = ", ".join(f"AnalysisTemplate/{n}" for n in templates)
    said = f"Rollout/{rollout.name} gated by {names}"
    if verdict.unreadable:
        yield finding_at(
            ANALYSIS_NEVER_FIRES,
            rollout,
            path=where,
            app=unit.name,
            severity=Severity.INFO,
            message=f"{said}: not drilled ({verdict.unreadable})",
            hint="Nothing to fix for this check; `headway drill` lists what it simulates.",
        )
        return
    drilled = (
        f"drill of {settings.scenario} at {settings.rps:g} rps, {settings.runs} replays "
        f"per release, seed {settings.seed}"
    )
    if verdict.detected < settings.min_detection:
        yield finding_at(
            ANALYSIS_NEVER_FIRES,
            rollout,
            path=where,
            app=unit.name,
            message=f"{said} would never abort the bad release ({drilled}): "
            f"{_numbers(verdict, settings)}",
            hint=_never_fires_hint(verdict, templates),
        )
    if verdict.false_aborts > settings.max_false_aborts:
        yield finding_at(
            ANALYSIS_FALSE_ABORTS,
            rollout,
            path=where,
            app=unit.name,
            message=f"{said} aborts an identical version in {_percent(verdict.false_aborts)} "
            f"of replays, above the {_percent(settings.max_false_aborts)} allowed ({drilled}): "
            f"{_numbers(verdict, settings)}",
        )


def check_drill_gates(ctx: CheckContext) -> Iterable[Finding]:
    if ctx.drill is None:
        return
    for unit, rollout in ctx.units_of_kind("Rollout"):
        if canary_of(rollout) is not None:
            yield from _drill_one(ctx, unit, rollout)
