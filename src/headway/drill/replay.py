"""One replay: a rollout's steps walked on a virtual clock (whole seconds) against one tape
of simulated traffic, its analysis runs measured and assessed by the controller's own code
(`next_measurement_at`, `record_measurement`, `assess_run`).

What the replay models of the Rollout controller: setWeight sends that share of the requests
to the canary; a timed pause waits, an untimed one waits for a promotion that never comes; a
step analysis must be Successful to go on; any analysis aborts the rollout on Failed or Error
and pauses it on Inconclusive (background analysis runs from its startingStep); after the
last step the canary serves everything. Other step kinds are skipped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from typing import TYPE_CHECKING

from headway.analysis.assessment import assess_run
from headway.analysis.measurement import MeasurementPhase, MetricConditions
from headway.analysis.policy import MetricPolicy
from headway.analysis.results import COMPLETED, Measurement, MetricResult, record_measurement
from headway.analysis.schedule import next_measurement_at
from headway.clock import EPOCH
from headway.drill.metrics import JudgeReading, Reading
from headway.model.analysis import Metric
from headway.providers.judge import JudgeConfig

if TYPE_CHECKING:  # the simulated traffic (numpy) loads with the summary that makes a Tape
    from headway.drill.traffic import Tape

__all__ = ["AnalysisPlan", "Ending", "Outcome", "PlannedMetric", "Stage", "replay"]

_BAD = frozenset({MeasurementPhase.FAILED, MeasurementPhase.ERROR, MeasurementPhase.INCONCLUSIVE})


def _at(second: int) -> datetime:
    return EPOCH + timedelta(seconds=second)


def _second(moment: datetime) -> int:
    return math.ceil((moment - EPOCH).total_seconds())


@dataclass(frozen=True)
class PlannedMetric:
    """A template metric (`reading` set) or the judge (`judge` set)."""

    policy: MetricPolicy
    metric: Metric | None = None
    conditions: MetricConditions | None = None
    reading: Reading | None = None
    judge: JudgeConfig | None = None


@dataclass(frozen=True)
class AnalysisPlan:
    """The metrics an analysis step (or the background analysis) runs."""

    metrics: tuple[PlannedMetric, ...]


@dataclass(frozen=True)
class Stage:
    """One step as the replay sees it: a weight, a pause (None: untimed) or an analysis."""

    weight: float | None = None
    pause: float | None = None
    paused: bool = False
    analysis: AnalysisPlan | None = None


@dataclass
class _Run:
    plan: AnalysisPlan
    started: int
    results: dict[str, MetricResult] = field(default_factory=dict)
    judges: dict[str, tuple[int, JudgeReading]] = field(default_factory=dict)
    phase: MeasurementPhase = MeasurementPhase.RUNNING

    def next_due(self) -> int | None:
        if self.phase in COMPLETED:
            return None
        times = [
            next_measurement_at(p.policy, self.results.get(p.policy.name), run_started_at=_at(0))
            for p in self.plan.metrics
        ]
        found = [_second(t) + self.started for t in times if t is not None]
        return min(found) if found else None

    def measure(self, tape: Tape, second: int) -> MeasurementPhase:
        """Take what is due at `second`, then the run's phase (Argo's assessment)."""
        for planned in self.plan.metrics:
            name = planned.policy.name
            due = next_measurement_at(planned.policy, self.results.get(name), run_started_at=_at(0))
            if due is None or _second(due) + self.started > second:
                continue
            taken = self._take(planned, tape, second)
            self.results[name] = record_measurement(
                self.results.get(name, MetricResult(name)), taken
            )
        policies = [p.policy for p in self.plan.metrics]
        self.phase = assess_run(policies, self.results).phase
        return self.phase

    def _take(self, planned: PlannedMetric, tape: Tape, second: int) -> Measurement:
        local = _at(second - self.started)
        if planned.judge is not None:
            name = planned.policy.name
            began, judge = self.judges.setdefault(name, (second, JudgeReading(planned.judge)))
            phase = judge.look(tape, second=second, elapsed=second - began)
            if phase is None:
                every = math.ceil(planned.judge.every.total_seconds())
                return Measurement(
                    MeasurementPhase.RUNNING,
                    _at(began - self.started),
                    resume_at=local + timedelta(seconds=every),
                )
            return Measurement(phase, _at(began - self.started), local)
        assert planned.reading is not None and planned.metric and planned.conditions
        phase = planned.reading.outcome(planned.metric, planned.conditions, tape, second)
        return Measurement(phase, local, local)


class Ending(StrEnum):
    ABORTED = "aborted"
    PAUSED = "paused"
    """A step analysis was Inconclusive: the rollout waits for a person, canary still serving."""
    PROMOTED = "promoted"
    UNDECIDED = "undecided"
    """Still on its steps (an analysis still measuring, an untimed pause) at the horizon."""


@dataclass(frozen=True)
class Outcome:
    ending: Ending
    after: float | None
    """Seconds from the canary's first traffic to the abort (or the pause)."""
    canary_requests: float
    """Requests the new version served by the horizon."""


@dataclass
class _Replay:
    tape: Tape
    weight: float = 0.0
    first_traffic: int | None = None
    background: _Run | None = None

    def wait(self, until: int, step_run: _Run | None = None) -> MeasurementPhase | None:
        """Serve and measure until `until` or until a run decides; the deciding phase (a step
        run's, or a background run's bad one) or None when the time came."""
        horizon = self.tape.horizon
        runs = [r for r in (step_run, self.background) if r is not None]
        while True:
            dues = [d for d in (r.next_due() for r in runs) if d is not None]
            second = max(min([*dues, until, horizon]), self.tape.now)
            self.tape.serve_until(second, canary_weight=self.weight)
            if second >= horizon:
                return None
            for run in runs:
                due = run.next_due()
                if due is not None and due <= second:
                    phase = run.measure(self.tape, second)
                    if run is step_run and phase in COMPLETED:
                        return phase
                    if run is self.background and phase in _BAD:
                        return phase
            if second >= until:
                return None

    def set_weight(self, weight: float) -> None:
        self.weight = weight
        if weight > 0 and self.first_traffic is None:
            self.first_traffic = self.tape.now

    def end(self, ending: Ending) -> Outcome:
        after = None
        if ending in (Ending.ABORTED, Ending.PAUSED) and self.first_traffic is not None:
            after = float(self.tape.now - self.first_traffic)
        if ending is Ending.ABORTED:
            self.weight = 0.0
        if ending is Ending.PROMOTED:
            self.set_weight(100.0)
        self.tape.serve_until(self.tape.horizon, canary_weight=self.weight)
        return Outcome(ending, after, float(self.tape.canary.requests[self.tape.horizon]))


def replay(
    stages: tuple[Stage, ...],
    tape: Tape,
    *,
    background: AnalysisPlan | None = None,
    background_from: int = 0,
) -> Outcome:
    """Walk `stages` once against `tape`; how the rollout ended."""
    state = _Replay(tape)
    for index, stage in enumerate(stages):
        if background is not None and index == background_from and state.background is None:
            state.background = _Run(background, tape.now)
        if stage.weight is not None:
            state.set_weight(stage.weight)
            continue
        step_run = _Run(stage.analysis, tape.now) if stage.analysis else None
        until = tape.horizon if stage.paused or step_run else tape.now + math.ceil(stage.pause or 0)
        phase = state.wait(until, step_run)
        if phase is None and tape.now >= tape.horizon:
            return state.end(Ending.UNDECIDED)
        if phase in (MeasurementPhase.FAILED, MeasurementPhase.ERROR):
            return state.end(Ending.ABORTED)
        if phase is MeasurementPhase.INCONCLUSIVE:
            return state.end(Ending.PAUSED)
    return state.end(Ending.PROMOTED)
