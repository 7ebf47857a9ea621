"""The judge's sequential test, held to exact computations: scipy's binomial probabilities, and
the operating characteristic computed over every path of the test (no sampling)."""

from __future__ import annotations

import math

import pytest
from scipy import stats  # type: ignore[import-untyped]

from headway.analysis.sequential import (
    Judgement,
    Look,
    RatioTest,
    SequentialState,
    known_rates_stopping,
    look_log_ratio,
    observe,
)


@pytest.mark.parametrize(("canary_bad", "stable_bad"), [(0, 3), (2, 5), (7, 1), (4, 0)])
def test_a_look_is_the_log_ratio_of_the_binomial_probabilities_of_the_canary_share(
    canary_bad: int, stable_bad: int
) -> None:
    test = RatioTest(worse_by=3.0)
    look = Look(
        canary_requests=40, canary_bad=canary_bad, stable_requests=360, stable_bad=stable_bad
    )
    total = canary_bad + stable_bad
    same, worse = 40 / 400, 3 * 40 / (3 * 40 + 360)
    expected = math.log(
        stats.binom.pmf(canary_bad, total, worse) / stats.binom.pmf(canary_bad, total, same)
    )
    assert look_log_ratio(test, look) == pytest.approx(expected, rel=1e-12)


def test_wald_boundaries_come_from_the_two_error_rates() -> None:
    test = RatioTest(false_abort=0.01, miss=0.05)
    assert test.fail_above == pytest.approx(math.log(0.95 / 0.01))
    assert test.pass_below == pytest.approx(math.log(0.05 / 0.99))


def _chance_of_failing(
    test: RatioTest, *, share: float, canary_share: float
) -> tuple[float, float]:
    """Exactly: one bad request per look, each the canary's with chance `canary_share`;
    the chance the walk reaches the fail boundary before the pass boundary, and the chance
    it decided nothing within 5000 looks."""
    up = math.log(test.worse_by * share / (test.worse_by * share + 1 - share) / share)
    down = math.log((1 - share) / (test.worse_by * share + 1 - share) / (1 - share))
    alive, failed = {0.0: 1.0}, 0.0
    for _ in range(5000):
        nxt: dict[float, float] = {}
        for position, chance in alive.items():
            for step, p in ((up, canary_share), (down, 1 - canary_share)):
                moved = round(position + step, 9)
                if moved >= test.fail_above:
                    failed += chance * p
                elif moved > test.pass_below:
                    nxt[moved] = nxt.get(moved, 0.0) + chance * p
        alive = nxt
    undecided = sum(alive.values())
    assert undecided < 1e-5  # nearly every path decided; the rest counts against the test
    return failed, undecided


@pytest.mark.parametrize("worse_by", [1.5, 2.0, 5.0])
def test_false_aborts_and_misses_stay_within_what_the_user_set(worse_by: float) -> None:
    test = RatioTest(worse_by=worse_by, false_abort=0.01, miss=0.02)
    share = 0.1  # the canary takes 10 % of the traffic
    identical, undecided = _chance_of_failing(test, share=share, canary_share=share)
    worse_share = worse_by * share / (worse_by * share + 1 - share)
    caught, _ = _chance_of_failing(test, share=share, canary_share=worse_share)
    assert identical + undecided <= 0.01
    assert 1 - caught <= 0.02  # undecided paths count as misses
    better, _ = _chance_of_failing(test, share=share, canary_share=share / 2)
    assert better < identical  # a better canary is failed even less often


def test_evidence_adds_up_and_decides_at_the_boundaries() -> None:
    test = RatioTest(worse_by=2.0)
    state = SequentialState()
    for _ in range(4):
        state = observe(test, state, Look(10, 3, 90, 1))
        assert state.judgement(test) is Judgement.CONTINUE or state.log_ratio >= test.fail_above
    assert (state.canary_requests, state.canary_bad, state.stable_bad) == (40, 12, 4)
    while state.judgement(test) is Judgement.CONTINUE:
        state = observe(test, state, Look(10, 3, 90, 1))
    assert state.judgement(test) is Judgement.FAIL
    quiet = SequentialState()
    while quiet.judgement(test) is Judgement.CONTINUE:
        quiet = observe(test, quiet, Look(10, 0, 90, 9))
    assert quiet.judgement(test) is Judgement.PASS


def test_a_look_without_bad_requests_or_without_one_side_adds_nothing() -> None:
    test = RatioTest()
    assert look_log_ratio(test, Look(10, 0, 90, 0)) == 0
    assert look_log_ratio(test, Look(0, 0, 90, 5)) == 0
    assert look_log_ratio(test, Look(10, 5, 0, 0)) == 0


def test_counts_that_shrink_and_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="only grow"):
        observe(RatioTest(), SequentialState(), Look(1, 2, 5, 0))
    with pytest.raises(ValueError, match="worseBy"):
        RatioTest(worse_by=1.0)
    with pytest.raises(ValueError, match="falseAbort"):
        RatioTest(false_abort=0.7)


def _stopping_by_enumeration(p0: float, p1: float, test: RatioTest, limit: int) -> list[float]:
    """P(decided by n) for n <= limit, by listing every sequence of requests."""
    a, b = math.log(p1 / p0), math.log((1 - p1) / (1 - p0))
    paths: dict[tuple[int, int], float] = {(0, 0): 1.0}
    done, out = 0.0, []
    for _ in range(limit):
        nxt: dict[tuple[int, int], float] = {}
        for (bad, good), chance in paths.items():
            for key, p in (((bad + 1, good), p1), ((bad, good + 1), 1 - p1)):
                ratio = key[0] * a + key[1] * b
                if ratio >= test.fail_above or ratio <= test.pass_below:
                    done += chance * p
                else:
                    nxt[key] = nxt.get(key, 0.0) + chance * p
        paths = nxt
        out.append(done)
    return out


def test_the_known_rates_reference_matches_enumerating_every_sequence() -> None:
    test = RatioTest(false_abort=0.05, miss=0.05)
    cumulative = _stopping_by_enumeration(0.1, 0.4, test, 60)
    median, p90 = known_rates_stopping(
        stable_rate=0.1, canary_rate=0.4, test=test, quantiles=(0.5, 0.9)
    )
    assert cumulative[median - 1] >= 0.5 > (cumulative[median - 2] if median > 1 else 0)
    assert cumulative[p90 - 1] >= 0.9 > cumulative[p90 - 2]


def test_the_issue_reference_1_to_5_percent_needs_about_a_hundred_canary_requests() -> None:
    # Issue 14 quotes "a median of about 100 canary requests" for 1% false aborts and misses.
    (median,) = known_rates_stopping(
        stable_rate=0.01, canary_rate=0.05, test=RatioTest(), quantiles=(0.5,)
    )
    assert 80 <= median <= 120
