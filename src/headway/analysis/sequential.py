"""The judge's statistics: a sequential test of canary against stable on the same traffic. Pure.

The question: is the canary's rate of bad requests (5xx answers, or requests slower than a
bound) at least `worse_by` times the stable revision's, measured on the same traffic window?

Within one look, condition on the number of bad requests both revisions served together. If
each request is bad independently, with rate `r * p` on the canary and `p` on the stable
revision, each bad request came from the canary with probability

    pi(r) = r * n_canary / (r * n_canary + n_stable)

whatever `p` is, so the unknown stable rate drops out (the Poisson conditioning used by
binomial sequential tests for rate ratios, e.g. Kulldorff et al. 2011, "A maximized sequential
probability ratio test for drug and vaccine safety surveillance"). Wald's (1945) sequential
probability ratio test of `r = 1` against `r = worse_by` then multiplies, look by look, the
likelihood ratio of the canary's share of bad requests:

    log LR += k_canary * log(pi1 / pi0) + k_stable * log((1 - pi1) / (1 - pi0))

and decides **fail** when log LR >= log((1 - miss) / false_abort) and **pass** when
log LR <= log(miss / (1 - false_abort)).

Why the error rates hold however often one looks: under `r <= 1` the likelihood ratio is a
nonnegative supermartingale, so by Ville's inequality (1939) the chance it ever reaches
1 / false_abort is at most false_abort; likewise 1 / LR under `r = worse_by` and the miss
probability. With Bernoulli (not Poisson) requests the canary's count given the total is
hypergeometric rather than binomial; the binomial factor is a convex function of that count,
and sampling without replacement is dominated in convex order by sampling with it (Hoeffding
1963, Theorem 4), so the factor's mean stays at most 1 and the false-abort bound still holds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from enum import StrEnum

__all__ = [
    "Judgement",
    "Look",
    "RatioTest",
    "SequentialState",
    "known_rates_stopping",
    "look_log_ratio",
    "observe",
]


class Judgement(StrEnum):
    CONTINUE = "continue"
    PASS = "pass"
    FAIL = "fail"


@dataclass(frozen=True)
class RatioTest:
    """What the user asks for: the smallest degradation worth catching and the two error rates."""

    worse_by: float = 2.0
    """The canary's bad-request rate, as a multiple of the stable's, that must be caught."""
    false_abort: float = 0.01
    """The chance of failing a canary that is no worse than stable."""
    miss: float = 0.01
    """The chance of passing a canary that is `worse_by` times worse."""

    def __post_init__(self) -> None:
        if not self.worse_by > 1 or math.isinf(self.worse_by):
            raise ValueError(f"worseBy must be a number above 1, not {self.worse_by!r}")
        for name, value in (("falseAbort", self.false_abort), ("miss", self.miss)):
            if not 0 < value < 0.5:
                raise ValueError(f"{name} must be between 0 and 0.5, not {value!r}")

    @property
    def fail_above(self) -> float:
        """Wald's upper boundary, log((1 - miss) / false_abort)."""
        return math.log((1 - self.miss) / self.false_abort)

    @property
    def pass_below(self) -> float:
        """Wald's lower boundary, log(miss / (1 - false_abort))."""
        return math.log(self.miss / (1 - self.false_abort))


@dataclass(frozen=True)
class Look:
    """What both revisions served since the previous look."""

    canary_requests: float
    canary_bad: float
    stable_requests: float
    stable_bad: float


@dataclass(frozen=True)
class SequentialState:
    """The evidence so far: the log likelihood ratio and the totals it was computed from."""

    log_ratio: float = 0.0
    canary_requests: float = 0.0
    canary_bad: float = 0.0
    stable_requests: float = 0.0
    stable_bad: float = 0.0

    def judgement(self, test: RatioTest) -> Judgement:
        if self.log_ratio >= test.fail_above:
            return Judgement.FAIL
        if self.log_ratio <= test.pass_below:
            return Judgement.PASS
        return Judgement.CONTINUE


def look_log_ratio(test: RatioTest, look: Look) -> float:
    """One look's log likelihood ratio (0 when the look cannot tell the two apart)."""
    canary, stable = look.canary_requests, look.stable_requests
    if canary <= 0 or stable <= 0 or look.canary_bad + look.stable_bad <= 0:
        return 0.0
    share_same = canary / (canary + stable)
    share_worse = test.worse_by * canary / (test.worse_by * canary + stable)
    return look.canary_bad * math.log(share_worse / share_same) + look.stable_bad * math.log(
        (1 - share_worse) / (1 - share_same)
    )


def observe(test: RatioTest, state: SequentialState, look: Look) -> SequentialState:
    """The state after one more look; a look with negative counts is refused."""
    counts = (look.canary_requests, look.canary_bad, look.stable_requests, look.stable_bad)
    if any(c < 0 for c in counts) or look.canary_bad > look.canary_requests:
        raise ValueError(f"a look needs counts that only grow, not {look}")
    if look.stable_bad > look.stable_requests:
        raise ValueError(f"a look needs counts that only grow, not {look}")
    return replace(
        state,
        log_ratio=state.log_ratio + look_log_ratio(test, look),
        canary_requests=state.canary_requests + look.canary_requests,
        canary_bad=state.canary_bad + look.canary_bad,
        stable_requests=state.stable_requests + look.stable_requests,
        stable_bad=state.stable_bad + look.stable_bad,
    )


def known_rates_stopping(
    *, stable_rate: float, canary_rate: float, test: RatioTest, quantiles: tuple[float, ...]
) -> tuple[int, ...]:
    """How many canary requests Wald's SPRT needs when both rates are *known*: the reference
    a judge that must learn the stable rate can be held to.

    The test is stable_rate against canary_rate on the canary's requests alone, run on a
    canary whose rate is canary_rate; the answer is the exact quantiles of its stopping
    time (computed over every path, not sampled), in requests."""
    bad = math.log(canary_rate / stable_rate)
    good = math.log((1 - canary_rate) / (1 - stable_rate))
    alive: dict[int, float] = {0: 1.0}  # bad requests so far -> chance of no decision yet
    stopped, found, requests = 0.0, [], 0
    wanted = sorted(quantiles)
    while wanted and alive:
        requests += 1
        nxt: dict[int, float] = {}
        for count, chance in alive.items():
            for extra, p in ((1, canary_rate), (0, 1 - canary_rate)):
                k = count + extra
                ratio = k * bad + (requests - k) * good
                if ratio >= test.fail_above or ratio <= test.pass_below:
                    stopped += chance * p
                else:
                    nxt[k] = nxt.get(k, 0.0) + chance * p
        alive = nxt
        while wanted and stopped >= wanted[0]:
            found.append(requests)
            wanted.pop(0)
    return tuple(found)
