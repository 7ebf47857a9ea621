"""The drill replays seed 003's rollout and the judge on simulated traffic, through the
controller's analysis code; the timings are virtual seconds, so they are exact."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from headway.drill.metrics import DrillError, reading_of
from headway.drill.plan import RolloutPlan, judge_plan, rollout_plan
from headway.drill.replay import Ending, Outcome, replay
from headway.drill.scenario import Scenario, ScenarioError, parse_scenario
from headway.drill.summary import drill
from headway.drill.traffic import Tape
from headway.model.analysis import AnalysisTemplate, parse_analysis_template
from headway.model.rollout import Rollout, parse_rollout
from headway.model.yamlload import load_documents
from headway.providers.judge import JUDGE_PLUGIN, JudgeConfig, judge_config

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "drill"
BAD = "error-ratio=1%->5%"


def seed003_rollout() -> Rollout:
    path = EXAMPLES / "seed003-rollout.yaml"
    rollout, diagnostics = parse_rollout(load_documents(path.read_text(), str(path)).documents[0])
    assert rollout is not None, diagnostics
    return rollout


def template(name: str) -> dict[str, AnalysisTemplate]:
    path = EXAMPLES / name
    parsed, diagnostics = parse_analysis_template(
        load_documents(path.read_text(), str(path)).documents[0]
    )
    assert parsed is not None, diagnostics
    return {parsed.metadata.name or "": parsed}


def judge(**more: object) -> JudgeConfig:
    return judge_config({JUDGE_PLUGIN: {"canaryHash": "c", "stableHash": "s", **more}})


def once(plan: RolloutPlan, scenario: Scenario, *, seed: int = 1, horizon: int = 900) -> Outcome:
    tape = Tape(scenario, rps=100, horizon=horizon, rng=np.random.default_rng(seed))
    return replay(
        plan.stages, tape, background=plan.background, background_from=plan.background_from
    )


def test_scenarios_read_as_written_and_bad_ones_are_named() -> None:
    shifted = parse_scenario("error-ratio=1%->5%,latency=100ms->400ms")
    assert (shifted.stable_errors, shifted.canary_errors) == (0.01, 0.05)
    assert (shifted.stable_latency, shifted.canary_latency) == (0.1, 0.4)
    dead = parse_scenario("dead-backend")
    assert dead.dead_backend and dead.canary_errors > dead.stable_errors  # a bad release
    assert not parse_scenario("no-traffic").canary_traffic
    assert parse_scenario(BAD).identical().canary_errors == 0.01
    for text, words in [("error-ratio=1%", "BEFORE->AFTER"), ("errors=1->2", "unknown")]:
        with pytest.raises(ScenarioError, match=words):
            parse_scenario(text)
    with pytest.raises(ScenarioError, match="no scenario given"):
        parse_scenario(" , ")
    with pytest.raises(ScenarioError, match="between 0 and 100%"):
        parse_scenario("error-ratio=1%->500%")


def test_seed003_scoped_to_the_canary_aborts_after_the_pause_and_three_failures() -> None:
    plan = rollout_plan(seed003_rollout(), template("seed003-canary-template.yaml"))
    outcome = once(plan, parse_scenario(BAD))
    # 2 minutes of pause, then measurements at 120 s, 150 s, 180 s: failed (3) > failureLimit (2)
    assert outcome.ending is Ending.ABORTED
    assert outcome.after == 180
    assert 1500 < outcome.canary_requests < 2100  # 10 rps for 180 s, nothing after the abort


def test_seed003_as_published_never_aborts_a_1_to_5_percent_canary_at_10_percent() -> None:
    # Its queries read the whole service: 0.9 * 1% + 0.1 * 5% = 1.4%, under its 2% threshold;
    # and its metrics have an interval but no count, so the analysis step never ends.
    plan = rollout_plan(seed003_rollout(), template("seed003-template.yaml"))
    outcome = once(plan, parse_scenario(BAD))
    assert outcome.ending is Ending.UNDECIDED
    assert outcome.canary_requests > 8000  # the bad version kept 10% for the whole 15 minutes


def test_a_dead_backend_pauses_the_template_and_the_judge_never_promotes() -> None:
    scenario = parse_scenario("dead-backend")
    template_side = once(
        rollout_plan(seed003_rollout(), template("seed003-template.yaml")), scenario
    )
    assert template_side.ending is Ending.PAUSED and template_side.after == 120
    judge_side = once(judge_plan(seed003_rollout(), judge(deadline="1m")), scenario)
    assert judge_side.ending is Ending.PAUSED and judge_side.after == 60


@pytest.mark.parametrize("broken", ["no-traffic", "empty-query"])
def test_the_judge_without_canary_evidence_is_inconclusive_at_its_deadline(broken: str) -> None:
    outcome = once(judge_plan(seed003_rollout(), judge(deadline="90s")), parse_scenario(broken))
    assert outcome.ending is Ending.PAUSED
    assert outcome.after == 90


def test_an_empty_query_fails_the_template_by_headways_empty_result_rule() -> None:
    plan = rollout_plan(seed003_rollout(), template("seed003-template.yaml"))
    outcome = once(plan, parse_scenario("empty-query"))
    assert outcome.ending is Ending.ABORTED and outcome.after == 120


def test_the_judge_catches_the_bad_canary_sooner_and_rarely_aborts_an_identical_one() -> None:
    summary = drill(
        judge_plan(seed003_rollout(), judge(worseBy=5, every="1s")),
        parse_scenario(BAD),
        rps=100,
        runs=200,
        horizon=600,
        seed=7,
    )
    assert summary.detected >= 0.97
    assert summary.median_abort is not None and summary.median_abort < 60
    assert summary.false_aborts <= 0.02


def test_a_query_the_drill_cannot_simulate_is_refused_by_metric_name() -> None:
    metric = template("seed003-template.yaml")["checkout-slo-check"].spec.metrics[0]
    prometheus = metric.provider.prometheus
    assert prometheus is not None
    odd = replace(prometheus, query="up{job='x'}[5m]")
    broken = replace(metric, provider=replace(metric.provider, prometheus=odd))
    with pytest.raises(DrillError, match='metric "error-rate": the drill cannot simulate'):
        reading_of(broken)


def test_a_traffic_provider_metric_reads_the_canary_over_its_window() -> None:
    text = """
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {name: checkout-slo-check}
spec:
  metrics:
  - name: canary-errors
    interval: 10s
    count: 3
    successCondition: result[0] < 0.02
    provider:
      plugin:
        headway.dev/traffic: {metric: error-ratio, podTemplateHash: "{{args.h}}", window: 30s}
"""
    parsed, problems = parse_analysis_template(load_documents(text, "t.yaml").documents[0])
    assert parsed is not None, problems
    (metric,) = parsed.spec.metrics
    reading = reading_of(metric)
    assert (reading.kind, reading.window, reading.canary_only) == ("error-ratio", 30, True)
    plan = rollout_plan(seed003_rollout(), {"checkout-slo-check": parsed})
    # measured at 120, 130, 140 s; the first failure (5% > 2%) fails it (failureLimit 0)
    outcome = once(plan, parse_scenario(BAD))
    assert outcome.ending is Ending.ABORTED and outcome.after == 120


def test_a_template_that_uses_the_judge_is_judged_after_the_rollouts_own_pause() -> None:
    plan = rollout_plan(seed003_rollout(), template("judge-template.yaml"))
    assert plan.readings() == ['metric "errors" is the judge (2x)']
    outcome = once(plan, parse_scenario(BAD))
    assert outcome.ending is Ending.ABORTED
    assert outcome.after is not None and 120 < outcome.after < 300  # the 2-minute pause first


def test_background_analysis_runs_from_its_starting_step_through_the_pauses() -> None:
    documents = load_documents(
        """
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: web:2}]}
  strategy:
    canary:
      analysis:
        templates: [{templateName: errors}]
        startingStep: 1
      steps:
      - setWeight: 10
      - pause: {duration: 10m}
      - setWeight: 100
---
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {name: errors}
spec:
  metrics:
  - name: errors
    interval: 10s
    initialDelay: 30s
    successCondition: result[0] < 0.02
    provider:
      plugin:
        headway.dev/traffic: {metric: error-ratio, podTemplateHash: "{{args.h}}", window: 30s}
""",
        "bg.yaml",
    ).documents
    rollout, problems = parse_rollout(documents[0])
    parsed, more = parse_analysis_template(documents[1])
    assert rollout is not None and parsed is not None, (problems, more)
    plan = rollout_plan(rollout, {"errors": parsed})
    assert plan.background is not None and plan.background_from == 1
    outcome = once(plan, parse_scenario("error-ratio=1%->10%"))
    assert outcome.ending is Ending.ABORTED
    assert outcome.after == 30  # the first measurement, after initialDelay, inside the pause


SUCCESS_RATE_TEMPLATE = """
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {name: checkout-slo-check}
spec:
  args: [{name: canary-hash}]
  metrics:
  - name: success-rate
    interval: 30s
    successCondition: result[0] >= 0.97
    provider:
      prometheus:
        address: http://prometheus.monitoring:9090
        query: |
          sum(rate(http_requests_total{rollouts_pod_template_hash="{{args.canary-hash}}",%s}[2m]))
          /
          sum(rate(http_requests_total{rollouts_pod_template_hash="{{args.canary-hash}}"}[2m]))
"""


@pytest.mark.parametrize("selector", ['status!~"5.*"', 'code!="5xx"', "status!~'[4-5].*'"])
def test_a_success_ratio_query_gates_on_successes_not_on_errors(selector: str) -> None:
    """rollouts-demo's istio example (and Argo Rollouts' documentation) writes the gate as a
    success ratio: the 5xx selector negated in the numerator. Read as an error ratio, a 1%
    error rate measured 0.01 and failed `>= 0.97`: every identical release aborted."""
    text = SUCCESS_RATE_TEMPLATE % selector
    parsed, diagnostics = parse_analysis_template(load_documents(text, "t.yaml").documents[0])
    assert parsed is not None, diagnostics
    reading = reading_of(parsed.spec.metrics[0])
    assert reading.kind == "success-ratio"
    assert reading.described == "success ratio of the canary over 120s"
    tape = Tape(parse_scenario(BAD), rps=100, horizon=300, rng=np.random.default_rng(3))
    tape.serve_until(300, canary_weight=50)
    window = tape.window(300, 120, canary_only=True)
    assert window.errors > 0
    assert reading.result(tape, 300) == [(window.requests - window.errors) / window.requests]
    summary = drill(
        rollout_plan(seed003_rollout(), {"checkout-slo-check": parsed}),
        parse_scenario("error-ratio=1%->10%"),
        rps=100,
        runs=20,
        horizon=600,
        seed=5,
    )
    assert summary.false_aborts == 0.0
    assert summary.detected == 1.0


def test_a_5xx_selector_that_is_not_negated_still_reads_an_error_ratio() -> None:
    text = SUCCESS_RATE_TEMPLATE % 'status=~"5.."'
    parsed, _ = parse_analysis_template(load_documents(text, "t.yaml").documents[0])
    assert parsed is not None
    assert reading_of(parsed.spec.metrics[0]).kind == "error-ratio"
