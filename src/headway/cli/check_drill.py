"""The drill engine `headway check` hands its drill rules (HW214, HW215).

The same code as `headway drill` (plan, replay, summary), only the user's template side, with
the check config's scenario, a bounded number of replays and a fixed seed. Answers are cached
by the Rollout's canary strategy, its templates and the settings: the same Rollout rendered
for several environments is drilled once.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from headway.check.drill_engine import DrillSettings, DrillVerdict
from headway.drill.metrics import DrillError
from headway.drill.plan import rollout_plan
from headway.drill.scenario import parse_scenario
from headway.drill.summary import drill
from headway.model.analysis import AnalysisTemplate, parse_analysis_template
from headway.model.diagnostics import Severity
from headway.model.durations import parse_duration
from headway.model.rollout import parse_rollout
from headway.model.yamlload import Document

__all__ = ["drill_gate"]

_CACHE_SIZE = 256
_VERDICTS: dict[tuple[str, DrillSettings], DrillVerdict] = {}


def drill_gate(
    rollout: Document, templates: Mapping[str, Document], settings: DrillSettings
) -> DrillVerdict:
    """The drill's numbers for `rollout` on the settings' scenario, or why it cannot run."""
    strategy = (rollout.obj.get("spec") or {}).get("strategy")
    key = json.dumps(
        [strategy, {name: doc.obj.get("spec") for name, doc in templates.items()}],
        sort_keys=True,
        default=str,
    )
    cached = _VERDICTS.get((key, settings))
    if cached is None:
        if len(_VERDICTS) >= _CACHE_SIZE:
            _VERDICTS.clear()
        cached = _VERDICTS[key, settings] = _drill(rollout, templates, settings)
    return cached


def _parsed_templates(templates: Mapping[str, Document]) -> dict[str, AnalysisTemplate] | str:
    parsed = {}
    for name, document in templates.items():
        template, diagnostics = parse_analysis_template(document)
        if template is None or any(d.severity is Severity.ERROR for d in diagnostics):
            return f"AnalysisTemplate/{name} does not validate (headway validate says why)"
        parsed[name] = template
    return parsed


def _drill(
    document: Document, templates: Mapping[str, Document], settings: DrillSettings
) -> DrillVerdict:
    rollout, diagnostics = parse_rollout(document)
    if rollout is None or any(d.severity is Severity.ERROR for d in diagnostics):
        return DrillVerdict(unreadable="the Rollout does not validate (headway validate says why)")
    parsed = _parsed_templates(templates)
    if isinstance(parsed, str):
        return DrillVerdict(unreadable=parsed)
    try:
        plan = rollout_plan(rollout, parsed)
    except DrillError as error:
        return DrillVerdict(unreadable=str(error))
    summary = drill(
        plan,
        parse_scenario(settings.scenario),
        rps=settings.rps,
        runs=settings.runs,
        horizon=int(parse_duration(settings.horizon, bare_seconds=False)),
        seed=settings.seed,
    )
    planned = [s.analysis for s in plan.stages if s.analysis] + [plan.background]
    whole = {
        m.policy.name: None
        for analysis in planned
        if analysis is not None
        for m in analysis.metrics
        if m.reading is not None and not m.reading.canary_only
    }
    return DrillVerdict(
        detected=summary.detected,
        paused=summary.paused,
        promoted=summary.promoted,
        undecided=summary.undecided,
        median_abort=summary.median_abort,
        bad_requests=summary.bad_requests,
        false_aborts=summary.false_aborts,
        whole_service_metrics=tuple(whole),
    )
