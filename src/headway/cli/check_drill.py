"""The drill engine `headway check` hands its drill rules (HW214, HW215).

The same code as `headway drill` (plan, replay, summary), only the user's template side, with
the check config's scenario, a bounded number of replays and a fixed seed. Answers are cached
by what the replay depends on (weights, pauses, each metric's policy, reading and conditions;
not names) and the settings: a Rollout rendered for several environments, or one template
copied per service, is drilled once. With `answers` (`check_drill_cache`), verdicts and
numbers are also kept between runs.
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
    from headway.cli.check_drill_cache import DrillAnswers, DrillNumbers
    from headway.drill.plan import RolloutPlan
    from headway.drill.replay import AnalysisPlan

__all__ = ["drill_gate"]

_CACHE_SIZE = 256
_NUMBERS: dict[tuple[str, DrillSettings], DrillNumbers] = {}


def drill_gate(
    rollout: Document,
    templates: Mapping[str, Document],
    settings: DrillSettings,
    *,
    parses: ParseMemo | None = None,
    answers: DrillAnswers | None = None,
) -> DrillVerdict:
    """The drill's numbers for `rollout` on the settings' scenario, or why it cannot run;
    from `answers` when an earlier run answered the same inputs (then nothing is planned)."""
    key = None if answers is None else answers.inputs_key(rollout, templates, settings)
    known = None if answers is None or key is None else answers.verdict(key)
    if known is not None:
        return known
    verdict = _drilled(rollout, templates, settings, parses or ParseMemo(), answers)
    if answers is not None and key is not None:
        answers.keep_verdict(key, verdict)
    return verdict


def _drilled(
    rollout: Document,
    templates: Mapping[str, Document],
    settings: DrillSettings,
    parses: ParseMemo,
    answers: DrillAnswers | None,
) -> DrillVerdict:
    plan = _plan(rollout, templates, parses)
    if isinstance(plan, str):
        return DrillVerdict(unreadable=plan)
    detected, paused, promoted, undecided, median_abort, bad_requests, false_aborts = _numbers(
        plan, settings, answers
    )
    return DrillVerdict(
        detected=detected,
        paused=paused,
        promoted=promoted,
        undecided=undecided,
        median_abort=median_abort,
        bad_requests=bad_requests,
        false_aborts=false_aborts,
        whole_service_metrics=_whole_service_metrics(plan),
    )


def _numbers(
    plan: RolloutPlan, settings: DrillSettings, answers: DrillAnswers | None
) -> DrillNumbers:
    """The drill's numbers for `plan`: from this process's memo, from `answers`, or drilled
    (the only path that loads numpy and the simulated traffic)."""
    plan_key = _plan_key(plan)
    numbers = _NUMBERS.get((plan_key, settings))
    if numbers is None and answers is not None:
        numbers = answers.numbers(plan_key, settings)
    if numbers is None:
        numbers = _drill_numbers(plan, settings)
    if len(_NUMBERS) >= _CACHE_SIZE:
        _NUMBERS.clear()
    _NUMBERS[(plan_key, settings)] = numbers
    if answers is not None:
        answers.keep_numbers(plan_key, settings, numbers)
    return numbers


def _drill_numbers(plan: RolloutPlan, settings: DrillSettings) -> DrillNumbers:
    from headway.drill.scenario import parse_scenario
    from headway.drill.summary import drill

    summary = drill(
        plan,
        parse_scenario(settings.scenario),
        rps=settings.rps,
        runs=settings.runs,
        horizon=int(parse_duration(settings.horizon, bare_seconds=False)),
        seed=settings.seed,
    )
    return (
        summary.detected,
        summary.paused,
        summary.promoted,
        summary.undecided,
        summary.median_abort,
        summary.bad_requests,
        summary.false_aborts,
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
