"""From a Rollout and its AnalysisTemplates to what the replay walks; and the same rollout
written with the judge: each partial setWeight followed by a judge analysis, and nothing else
(its pauses and its own analysis dropped: the judge holds each weight until it decides).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from headway.analysis.measurement import compile_metric_conditions
from headway.analysis.policy import MetricPolicy, PolicyError, metric_policies
from headway.drill.metrics import DrillError, reading_of
from headway.drill.replay import AnalysisPlan, PlannedMetric, Stage
from headway.model.analysis import AnalysisTemplate, Metric
from headway.model.rollout import Rollout
from headway.model.rollout_steps import AnalysisTemplateRef, CanaryStep
from headway.providers.judge import JUDGE_PLUGIN, JudgeConfig, JudgeConfigError, judge_config

__all__ = ["RolloutPlan", "judge_plan", "rollout_plan"]


class RolloutPlan:
    """The stages to walk, and the background analysis with the stage it starts at."""

    def __init__(
        self,
        stages: tuple[Stage, ...],
        background: AnalysisPlan | None = None,
        background_from: int = 0,
    ) -> None:
        self.stages = stages
        self.background = background
        self.background_from = background_from

    @property
    def reads_latency(self) -> bool:
        """Whether any metric needs the latency histograms (the costliest part to simulate)."""
        plans = [s.analysis for s in self.stages if s.analysis] + [self.background]
        return any(
            (m.reading is not None and m.reading.kind == "latency")
            or (m.judge is not None and m.judge.slower_than is not None)
            for plan in plans
            if plan is not None
            for m in plan.metrics
        )

    def readings(self) -> list[str]:
        """How each template metric is read from the simulated traffic, once per metric."""
        plans = [s.analysis for s in self.stages if s.analysis] + [self.background]
        lines = {
            (
                f'metric "{m.policy.name}" reads the {m.reading.described}'
                if m.reading is not None
                else f'metric "{m.policy.name}" is the judge ({m.judge.test.worse_by:g}x)'
                if m.judge is not None
                else ""
            ): None
            for plan in plans
            if plan is not None
            for m in plan.metrics
        }
        return list(lines)


def _analysis(
    refs: Sequence[AnalysisTemplateRef], templates: Mapping[str, AnalysisTemplate]
) -> AnalysisPlan:
    metrics: list[Metric] = []
    for ref in refs:
        template = templates.get(ref.template_name or "")
        if template is None:
            known = ", ".join(sorted(templates)) or "none"
            raise DrillError(
                f"the rollout names template {ref.template_name!r}, which no --template "
                f"file holds (given: {known})"
            )
        metrics.extend(template.spec.metrics)
    try:
        policies = metric_policies(metrics)
    except PolicyError as error:
        raise DrillError(str(error)) from None
    return AnalysisPlan(
        tuple(_planned(policy, metric) for policy, metric in zip(policies, metrics, strict=True))
    )


def _planned(policy: MetricPolicy, metric: Metric) -> PlannedMetric:
    """A judge metric runs the judge; any other is read from the simulated traffic."""
    plugin = metric.provider.plugin or {}
    if metric.provider.kind == "plugin" and JUDGE_PLUGIN in plugin:
        try:
            config = judge_config(plugin)
        except JudgeConfigError as error:
            raise DrillError(f'metric "{metric.name}": {error}') from None
        if config.prometheus is not None:  # the simulated router counts either way
            config = replace(config, prometheus=None)
        return PlannedMetric(policy, judge=config)
    conditions = compile_metric_conditions(
        metric.name,
        success_condition=metric.success_condition or "",
        failure_condition=metric.failure_condition or "",
    )
    return PlannedMetric(policy, metric, conditions, reading_of(metric))


def _stage(step: CanaryStep, templates: Mapping[str, AnalysisTemplate]) -> Stage:
    if step.set_weight is not None:
        return Stage(weight=float(step.set_weight))
    if step.pause is not None:
        duration = step.pause.duration
        return Stage(pause=duration, paused=duration is None)
    if step.analysis is not None:
        return Stage(analysis=_analysis(step.analysis.templates, templates))
    return Stage(pause=0)


def rollout_plan(rollout: Rollout, templates: Mapping[str, AnalysisTemplate]) -> RolloutPlan:
    """The rollout's canary steps and background analysis as the replay walks them."""
    canary = rollout.spec.strategy.canary
    if canary is None:
        raise DrillError("the drill replays canary rollouts; this one has no canary strategy")
    stages = tuple(_stage(step, templates) for step in canary.steps)
    background = None
    if canary.analysis is not None and canary.analysis.templates:
        background = _analysis(canary.analysis.templates, templates)
    start = canary.analysis.starting_step if canary.analysis else None
    return RolloutPlan(stages, background, start or 0)


def judge_plan(rollout: Rollout, judge: JudgeConfig) -> RolloutPlan:
    """The rollout's weights, each below 100 held until the judge passes it.

    Each judged step may abort an identical release with chance falseAbort / (judged steps),
    so the whole rollout does so with chance at most falseAbort (the union bound)."""
    canary = rollout.spec.strategy.canary
    if canary is None:
        raise DrillError("the drill replays canary rollouts; this one has no canary strategy")
    weights = [float(s.set_weight) for s in canary.steps if s.set_weight is not None]
    judged = sum(0 < w < 100 for w in weights) or 1
    test = replace(judge.test, false_abort=judge.test.false_abort / judged)
    analysis = AnalysisPlan(
        (PlannedMetric(MetricPolicy("judge"), judge=replace(judge, test=test)),)
    )
    stages: list[Stage] = []
    for weight in weights:
        stages.append(Stage(weight=weight))
        if 0 < weight < 100:
            stages.append(Stage(analysis=analysis))
    return RolloutPlan(tuple(stages))
