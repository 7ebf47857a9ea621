"""The drill engine `headway check` hands its drill rules (HW214, HW215).

The same code as `headway drill` (plan, replay, summary), only the user's template side, with
the check config's scenario, a bounded number of replays and a fixed seed. Answers are cached
by what the replay depends on (weights, pauses, each metric's policy, reading and conditions;
not names) and the settings: a Rollout rendered for several environments, or one template
copied per service, is drilled once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from headway.check.drill_engine import DrillSettings, DrillVerdict
from headway.model.analysis import AnalysisTemplate, parse_analysis_template
from headway.model.diagnostics import Severity
from headway.model.durations import parse_duration
from headway.model.manifests import ParseMemo
from headway.model.rollout import parse_rollout
from headway.model.yamlload import Document

if TYPE_CHECKING:  # the drill (numpy, the judge) loads on the first Rollout it replays
    from headway.drill.plan import RolloutPlan
    from headway.drill.replay import AnalysisPlan
    from headway.drill.summary import DrillSummary

__all__ = ["drill_gate"]

_CACHE_SIZE = 256
_SUMMARIES: dict[tuple[str, DrillSettings], DrillSummary] = {}


def drill_gate(
    rollout: Document,
    templates: Mapping[str, Document],
    settings: DrillSettings,
    *,
    parses: ParseMemo | None = None,
) -> DrillVerdict:
    """The drill's numbers for `rollout` on the settings' scenario, or why it cannot run."""
    from headway.drill.scenario import parse_scenario
    from headway.drill.summary import drill

    plan = _plan(rollout, templates, parses or ParseMemo())
    if isinstance(plan, str):
        return DrillVerdict(unreadable=plan)
    key = (_plan_key(plan), settings)
    summary = _SUMMARIES.get(key)
    if summary is None:
        if len(_SUMMARIES) >= _CACHE_SIZE:
            _SUMMARIES.clear()
        summary = _SUMMARIES[key] = drill(
            plan,
            parse_scenario(settings.scenario),
            rps=settings.rps,
            runs=settings.runs,
            horizon=int(parse_duration(settings.horizon, bare_seconds=False)),
            seed=settings.seed,
        )
    return DrillVerdict(
        detected=summary.detected,
        paused=summary.paused,
        promoted=summary.promoted,
        undecided=summary.undecided,
        median_abort=summary.median_abort,
        bad_requests=summary.bad_requests,
        false_aborts=summary.false_aborts,
        whole_service_metrics=_whole_service_metrics(plan),
    )


def _analyses(plan: RolloutPlan) -> list[AnalysisPlan | None]:
    return [s.analysis for s in plan.stages if s.analysis] + [plan.background]


def _whole_service_metrics(plan: RolloutPlan) -> tuple[str, ...]:
    names = {
        m.policy.name: None
        for analysis in _analyses(plan)
        if analysis is not None
        for m in analysis.metrics
        if m.reading is not None and not m.reading.canary_only
    }
    return tuple(names)


def _analysis_key(analysis: AnalysisPlan | None) -> object:
    """What decides an analysis's outcomes on simulated traffic: not names, not query text."""
    if analysis is None:
        return None
    return tuple(
        (
            replace(m.policy, name=str(index)),
            None if m.reading is None else replace(m.reading, described=""),
            None
            if m.metric is None
            else (
                m.metric.success_condition,
                m.metric.failure_condition,
                m.metric.on_empty,
                m.metric.on_non_finite,
            ),
            m.judge,
        )
        for index, m in enumerate(analysis.metrics)
    )


def _plan_key(plan: RolloutPlan) -> str:
    """Two Rollouts with the same key replay identically: one drill answers both (the 1,000
    per-service copies of one template a platform repository holds are drilled once)."""
    stages = [(s.weight, s.pause, s.paused, _analysis_key(s.analysis)) for s in plan.stages]
    return repr((stages, _analysis_key(plan.background), plan.background_from))


def _parsed_templates(
    templates: Mapping[str, Document], parses: ParseMemo
) -> dict[str, AnalysisTemplate] | str:
    parsed = {}
    for name, document in templates.items():
        template, diagnostics = parses.parse(parse_analysis_template, document)
        if template is None or any(d.severity is Severity.ERROR for d in diagnostics):
            return f"AnalysisTemplate/{name} does not validate (headway validate says why)"
        parsed[name] = template
    return parsed


def _plan(
    document: Document, templates: Mapping[str, Document], parses: ParseMemo
) -> RolloutPlan | str:
    from headway.drill.metrics import DrillError
    from headway.drill.plan import rollout_plan

    rollout, diagnostics = parses.parse(parse_rollout, document)
    if rollout is None or any(d.severity is Severity.ERROR for d in diagnostics):
        return "the Rollout does not validate (headway validate says why)"
    parsed = _parsed_templates(templates, parses)
    if isinstance(parsed, str):
        return parsed
    try:
        return rollout_plan(rollout, parsed)
    except DrillError as error:
        return str(error)
