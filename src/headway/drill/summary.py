"""Many replays of one plan under one scenario, summed up; and the known-rates reference.

`drill` runs the plan `runs` times on the bad release and `runs` times on an identical one
(each replay its own traffic, from one seeded generator, so a drill is repeatable).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from headway.drill.numeric import np
from headway.drill.plan import RolloutPlan
from headway.drill.replay import Ending, Outcome, replay
from headway.drill.scenario import Scenario
from headway.drill.traffic import Tape

__all__ = ["DrillSummary", "drill", "summarize"]


@dataclass(frozen=True)
class DrillSummary:
    runs: int
    detected: float
    """Share of replays on the bad release that ended aborted."""
    paused: float
    promoted: float
    undecided: float
    median_abort: float | None
    """Seconds from the canary's first request to the abort; None when under half abort."""
    p90_abort: float | None
    bad_requests: float
    """Median requests served by the new version by the horizon (abort or not)."""
    false_aborts: float
    """Share of replays on an identical release that ended aborted."""


def _quantile(times: Sequence[float], q: float) -> float | None:
    """The q-quantile counting replays that never aborted as never; None when that is never."""
    ordered = sorted(times)
    rank = math.ceil(q * len(ordered)) - 1
    value = ordered[max(rank, 0)] if ordered else math.inf
    return None if math.isinf(value) else value


def summarize(bad: Sequence[Outcome], identical: Sequence[Outcome]) -> DrillSummary:
    def share(outcomes: Sequence[Outcome], ending: Ending) -> float:
        return sum(o.ending is ending for o in outcomes) / len(outcomes)

    times = [
        o.after if o.ending is Ending.ABORTED and o.after is not None else math.inf for o in bad
    ]
    return DrillSummary(
        runs=len(bad),
        detected=share(bad, Ending.ABORTED),
        paused=share(bad, Ending.PAUSED),
        promoted=share(bad, Ending.PROMOTED),
        undecided=share(bad, Ending.UNDECIDED),
        median_abort=_quantile(times, 0.5),
        p90_abort=_quantile(times, 0.9),
        bad_requests=float(statistics.median([o.canary_requests for o in bad])),
        false_aborts=share(identical, Ending.ABORTED),
    )


def drill(
    plan: RolloutPlan,
    scenario: Scenario,
    *,
    rps: float,
    runs: int,
    horizon: int,
    seed: int = 0,
) -> DrillSummary:
    """Replay `plan` `runs` times on the scenario's bad release and on an identical one."""
    rng = np.random.default_rng(seed)

    def once(played: Scenario) -> Outcome:
        tape = Tape(played, rps=rps, horizon=horizon, rng=rng, latency=plan.reads_latency)
        return replay(
            plan.stages,
            tape,
            background=plan.background,
            background_from=plan.background_from,
        )

    bad = [once(scenario) for _ in range(runs)]
    identical = [once(scenario.identical()) for _ in range(runs)]
    return summarize(bad, identical)
