"""`headway drill`: how fast a rollout's analysis catches a bad release, and how often it aborts
a good one, on simulated traffic, next to the judge (`headway.dev/judge`).

    headway drill ROLLOUT.yaml --template T.yaml --scenario error-ratio=1%->5% --rps 100

Exit status: 0 when the drill ran, 2 for bad usage (a missing file, a manifest with errors, a
scenario or metric the drill cannot simulate).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from headway.cli.manifest_input import read_documents, usage_error
from headway.model.durations import DurationError, parse_duration

if TYPE_CHECKING:  # the drill (numpy), the models, the judge and YAML load when a drill runs
    from headway.drill.plan import RolloutPlan
    from headway.drill.scenario import Scenario
    from headway.drill.summary import DrillSummary
    from headway.model.analysis import AnalysisTemplate
    from headway.model.rollout import Rollout
    from headway.model.yamlload import Document
    from headway.providers.judge import JudgeConfig

__all__ = ["drill_command", "register"]

TEMPLATE_KINDS = ("AnalysisTemplate", "ClusterAnalysisTemplate")
_FLAGS = {
    "worseBy": "--judge-worse-by",
    "falseAbort": "--judge-false-abort",
    "miss": "--judge-miss",
    "every": "--judge-every",
    "deadline": "--judge-deadline",
    "slowerThan": "--judge-slower-than",
}


def _rollout(documents: list[Document], path: Path) -> Rollout:
    from headway.model.rollout import parse_rollout

    found = [d for d in documents if d.kind == "Rollout"]
    if len(found) != 1:
        raise usage_error(f"{path}: expected one Rollout, found {len(found)}")
    rollout, diagnostics = parse_rollout(found[0])
    errors = [d for d in diagnostics if d.severity == "error"]
    if rollout is None or errors:
        raise usage_error("\n".join(str(d) for d in errors or diagnostics))
    return rollout


def _templates(documents: list[Document]) -> dict[str, AnalysisTemplate]:
    from headway.model.analysis import parse_analysis_template

    templates = {}
    for document in (d for d in documents if d.kind in TEMPLATE_KINDS):
        template, diagnostics = parse_analysis_template(document)
        errors = [d for d in diagnostics if d.severity == "error"]
        if template is None or errors:
            raise usage_error("\n".join(str(d) for d in errors or diagnostics))
        templates[template.metadata.name or ""] = template
    return templates


@dataclass(frozen=True)
class _JudgeOptions:
    worse_by: float
    false_abort: float
    miss: float
    every: str
    deadline: str
    slower_than: str | None

    def config(self) -> JudgeConfig:
        from headway.providers.judge import JUDGE_PLUGIN, JudgeConfigError, judge_config

        latency = {"signal": "latency", "slowerThan": self.slower_than} if self.slower_than else {}
        block = {
            **latency,
            "canaryHash": "canary",
            "stableHash": "stable",
            "worseBy": self.worse_by,
            "falseAbort": self.false_abort,
            "miss": self.miss,
            "every": self.every,
            "deadline": self.deadline,
        }
        try:
            return judge_config({JUDGE_PLUGIN: block})
        except JudgeConfigError as error:
            message = str(error)
            flag = next((f for field, f in _FLAGS.items() if field in message), "--judge-*")
            raise usage_error(f"{flag}: {message}") from None


def _row(name: str, values: Sequence[str]) -> str:
    return f"  {name:<34}" + "".join(f"{v:>16}" for v in values)


def _table(summaries: Sequence[DrillSummary]) -> list[str]:
    def when(value: float | None) -> str:
        return "never" if value is None else f"{value:.0f} s"

    rows = [
        ("detected (aborted)", [f"{s.detected:.1%}" for s in summaries]),
        ("paused (Inconclusive)", [f"{s.paused:.1%}" for s in summaries]),
        ("promoted to 100%", [f"{s.promoted:.1%}" for s in summaries]),
        ("still on its steps at the horizon", [f"{s.undecided:.1%}" for s in summaries]),
        ("median time to abort", [when(s.median_abort) for s in summaries]),
        ("p90 time to abort", [when(s.p90_abort) for s in summaries]),
        ("requests served by the bad version", [f"{s.bad_requests:.0f}" for s in summaries]),
        ("false aborts, identical version", [f"{s.false_aborts:.1%}" for s in summaries]),
    ]
    return [_row(name, values) for name, values in rows]


def _reference(scenario: Scenario, rollout: Rollout, rps: float, judge: JudgeConfig) -> str:
    """Wald's SPRT with both error ratios known, at the first canary weight: the bound."""
    from headway.analysis.sequential import known_rates_stopping

    canary = rollout.spec.strategy.canary
    weights = [s.set_weight for s in (canary.steps if canary else ()) if s.set_weight]
    if not weights or scenario.canary_errors <= scenario.stable_errors:
        return ""
    (median,) = known_rates_stopping(
        stable_rate=scenario.stable_errors,
        canary_rate=scenario.canary_errors,
        test=judge.test,
        quantiles=(0.5,),
    )
    seconds = median / (rps * weights[0] / 100)
    return (
        f"reference: an SPRT that knew both error ratios needs a median of {median} canary "
        f"requests ({seconds:.1f} s at {weights[0]}% of {rps:g} rps)"
    )


def drill_command(  # noqa: PLR0917 (typer maps each parameter to an option)
    rollout_file: Annotated[Path, typer.Argument(help="A file holding the Rollout to replay.")],
    scenario: Annotated[
        str,
        typer.Option(
            "--scenario",
            help="What goes wrong: error-ratio=1%->5%, latency=100ms->400ms, dead-backend, "
            "empty-query, no-traffic (comma-separated).",
        ),
    ],
    template: Annotated[
        list[Path] | None,
        typer.Option(
            "--template",
            help="A file of AnalysisTemplates the rollout names (repeatable; templates in the "
            "rollout's own file are read too).",
        ),
    ] = None,
    rps: Annotated[float, typer.Option("--rps", help="Requests per second to the service.")] = 100,
    runs: Annotated[int, typer.Option("--runs", help="Replays per side and release.")] = 1000,
    horizon: Annotated[
        str, typer.Option("--horizon", help="How long each replay lasts (virtual time).")
    ] = "15m",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the simulated traffic.")] = 0,
    worse_by: Annotated[
        float, typer.Option("--judge-worse-by", help="The judge's smallest degradation.")
    ] = 2.0,
    false_abort: Annotated[
        float, typer.Option("--judge-false-abort", help="The judge's false-abort chance.")
    ] = 0.01,
    miss: Annotated[float, typer.Option("--judge-miss", help="The judge's miss chance.")] = 0.01,
    every: Annotated[str, typer.Option("--judge-every", help="How often the judge looks.")] = "2s",
    deadline: Annotated[
        str, typer.Option("--judge-deadline", help="When the judge gives up: Inconclusive.")
    ] = "5m",
    slower_than: Annotated[
        str | None,
        typer.Option(
            "--judge-slower-than",
            help="Judge latency instead of errors: the share of requests slower than this.",
        ),
    ] = None,
) -> None:
    """Replay a rollout against simulated traffic: detection, time to abort, bad requests
    and false aborts, for your template and for the judge side by side."""
    from headway.drill.metrics import DrillError
    from headway.drill.plan import judge_plan, rollout_plan
    from headway.drill.scenario import ScenarioError, parse_scenario
    from headway.drill.summary import drill

    try:
        played = parse_scenario(scenario)
        seconds = int(parse_duration(horizon, bare_seconds=False))
    except (ScenarioError, DurationError) as error:
        raise usage_error(str(error)) from None
    if runs < 1 or rps <= 0 or seconds <= 0:
        raise usage_error("--runs, --rps and --horizon must be above 0")
    documents = read_documents(rollout_file)
    rollout = _rollout(documents, rollout_file)
    templates = _templates(documents)
    for path in template or []:
        templates.update(_templates(read_documents(path)))
    judge = _JudgeOptions(worse_by, false_abort, miss, every, deadline, slower_than).config()
    try:
        plans: list[RolloutPlan] = [rollout_plan(rollout, templates), judge_plan(rollout, judge)]
    except DrillError as error:
        raise usage_error(str(error)) from None
    summaries = [
        drill(plan, played, rps=rps, runs=runs, horizon=seconds, seed=seed) for plan in plans
    ]
    typer.echo(
        f"drill: {played.text} at {rps:g} rps, {runs} replays per release, horizon {horizon}"
    )
    for planned in plans[0].readings():
        typer.echo(f"  {planned}")
    typer.echo(_row("", ["your template", f"judge {worse_by:g}x"]))
    for line in _table(summaries):
        typer.echo(line)
    reference = _reference(played, rollout, rps, judge)
    if reference:
        typer.echo(reference)


def register(app: typer.Typer) -> None:
    app.command("drill")(drill_command)
