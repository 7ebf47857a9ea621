"""The judge against seed 003's analysis, on issue 14's scenario, with `headway drill`'s engine.

    .venv/bin/python bench/bench_judge.py [--runs 1000]

Seed 003's rollout (10% for a 2-minute pause, then its 30 s / failureLimit 2 template) and the
same rollout judged by `headway.dev/judge` (each partial weight held until the judge decides),
both replayed on simulated traffic: 100 rps, the canary's error ratio 5% against the stable's
1% (and an identical release for false aborts). Seed 003's template is run twice: as
published (its queries read the whole service) and scoped to the canary's hash (issue 14's
reading). Prints the table and the three ratios of issue 14's goal:

* the judge's median time to abort over the known-rates SPRT's (exact, not simulated): <= 2;
* the judge's false aborts on an identical release: <= 1%;
* requests served by the bad version, seed 003 (canary-scoped) over the judge: >= 10.

Times are virtual seconds of the simulation, so the numbers do not depend on the machine.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from headway.analysis.sequential import known_rates_stopping
from headway.drill.plan import RolloutPlan, judge_plan, rollout_plan
from headway.drill.scenario import parse_scenario
from headway.drill.summary import DrillSummary, drill
from headway.model.analysis import AnalysisTemplate, parse_analysis_template
from headway.model.rollout import Rollout, parse_rollout
from headway.model.yamlload import load_documents
from headway.providers.judge import JUDGE_PLUGIN, JudgeConfig, judge_config

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "drill"
RPS, WEIGHT, HORIZON = 100.0, 10, 900
SCENARIO = "error-ratio=1%->5%"


def _rollout() -> Rollout:
    path = EXAMPLES / "seed003-rollout.yaml"
    rollout, problems = parse_rollout(load_documents(path.read_text(), str(path)).documents[0])
    assert rollout is not None, problems
    return rollout


def _templates(name: str) -> dict[str, AnalysisTemplate]:
    path = EXAMPLES / name
    document = load_documents(path.read_text(), str(path)).documents[0]
    template, problems = parse_analysis_template(document)
    assert template is not None, problems
    return {template.metadata.name or "": template}


def _judge(worse_by: float) -> JudgeConfig:
    block = {"canaryHash": "c", "stableHash": "s", "worseBy": worse_by, "every": "1s"}
    return judge_config({JUDGE_PLUGIN: block})


def _when(value: float | None) -> str:
    return "never" if value is None else f"{value:.0f} s"


def _line(name: str, summary: DrillSummary, spent: float) -> str:
    return (
        f"{name:<34}{summary.detected:>9.1%}{_when(summary.median_abort):>9}"
        f"{_when(summary.p90_abort):>9}{summary.bad_requests:>10.0f}"
        f"{summary.false_aborts:>9.2%}{spent:>8.1f}s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    runs = parser.parse_args().runs
    rollout = _rollout()
    sides: list[tuple[str, RolloutPlan]] = [
        ("seed 003 as published", rollout_plan(rollout, _templates("seed003-template.yaml"))),
        (
            "seed 003 scoped to the canary",
            rollout_plan(rollout, _templates("seed003-canary-template.yaml")),
        ),
        ("judge, worseBy 5", judge_plan(rollout, _judge(5.0))),
        ("judge, worseBy 2", judge_plan(rollout, _judge(2.0))),
    ]
    scenario = parse_scenario(SCENARIO)
    print(f"{SCENARIO} at {WEIGHT}% of {RPS:g} rps, {runs} replays per release and side")
    print(f"{'':<34}{'detected':>9}{'median':>9}{'p90':>9}{'bad reqs':>10}{'false ab':>9}")
    summaries: dict[str, DrillSummary] = {}
    for name, plan in sides:
        started = time.perf_counter()
        summary = drill(plan, scenario, rps=RPS, runs=runs, horizon=HORIZON, seed=14)
        summaries[name] = summary
        print(_line(name, summary, time.perf_counter() - started), flush=True)
    (median,) = known_rates_stopping(
        stable_rate=0.01, canary_rate=0.05, test=_judge(5.0).test, quantiles=(0.5,)
    )
    bound = median / (RPS * WEIGHT / 100)
    judge, seed = summaries["judge, worseBy 5"], summaries["seed 003 scoped to the canary"]
    print(f"known-rates SPRT (1% vs 5%, 1%/1%): median {median} canary requests = {bound:.1f} s")
    if judge.median_abort is not None:
        print(f"judge median / SPRT bound: {judge.median_abort / bound:.2f} (goal <= 2)")
    print(f"judge false aborts, identical release: {judge.false_aborts:.2%} (goal <= 1%)")
    ratio = seed.bad_requests / max(judge.bad_requests, 1.0)
    print(f"bad requests, seed 003 (canary-scoped) / judge: {ratio:.1f}x (goal >= 10x)")


if __name__ == "__main__":
    main()
