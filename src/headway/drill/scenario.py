"""What the drill injects: `error-ratio=1%->5%`, `latency=100ms->400ms`, `dead-backend`,
`empty-query`, `no-traffic`, joined with commas. Pure.

Error ratio and latency shifts say the stable revision's value, then the canary's. The other
three break the measuring, not the release: they are played on a canary that is bad
(1% -> 5% errors unless a shift is also given), so what they show is whether the analysis
lets a bad release through when it cannot see.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from headway.model.durations import DurationError, parse_duration

__all__ = ["Scenario", "ScenarioError", "parse_scenario"]

BROKEN_MEASURING = ("dead-backend", "empty-query", "no-traffic")


class ScenarioError(ValueError):
    pass


@dataclass(frozen=True)
class Scenario:
    text: str
    stable_errors: float = 0.01
    canary_errors: float = 0.01
    stable_latency: float = 0.1
    """Median latency in seconds; latencies are log-normal."""
    canary_latency: float = 0.1
    dead_backend: bool = False
    empty_query: bool = False
    canary_traffic: bool = True

    def identical(self) -> Scenario:
        """The same release on both sides, measured the same way: for false aborts."""
        return replace(
            self,
            text="identical version",
            canary_errors=self.stable_errors,
            canary_latency=self.stable_latency,
        )


def _share(text: str, whole: str) -> float:
    try:
        value = float(text.removesuffix("%")) / (100 if text.endswith("%") else 1)
    except ValueError:
        raise ScenarioError(f"{whole}: {text!r} is not a ratio (write 1% or 0.01)") from None
    if not 0 <= value <= 1:
        raise ScenarioError(f"{whole}: {text!r} is not between 0 and 100%")
    return value


def _seconds(text: str, whole: str) -> float:
    try:
        seconds = parse_duration(text, bare_seconds=False)
    except DurationError as error:
        raise ScenarioError(f"{whole}: {error}") from None
    if seconds <= 0:
        raise ScenarioError(f"{whole}: a latency must be above 0")
    return seconds


def _shift(part: str) -> tuple[str, str, str]:
    name, _, values = part.partition("=")
    before, arrow, after = values.partition("->")
    if not arrow or not before or not after:
        raise ScenarioError(f"{part}: write {name}=BEFORE->AFTER, e.g. error-ratio=1%->5%")
    return name, before.strip(), after.strip()


def parse_scenario(text: str) -> Scenario:
    """The scenario a `--scenario` text describes, or `ScenarioError` naming the bad part."""
    scenario = Scenario(text)
    shifted = False
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts:
        raise ScenarioError(
            f"no scenario given (error-ratio=A->B, latency=A->B, {', '.join(BROKEN_MEASURING)})"
        )
    for part in parts:
        if part in BROKEN_MEASURING:
            scenario = replace(
                scenario,
                dead_backend=scenario.dead_backend or part == "dead-backend",
                empty_query=scenario.empty_query or part == "empty-query",
                canary_traffic=scenario.canary_traffic and part != "no-traffic",
            )
            continue
        name, before, after = _shift(part)
        if name == "error-ratio":
            values = (_share(before, part), _share(after, part))
            scenario = replace(scenario, stable_errors=values[0], canary_errors=values[1])
        elif name == "latency":
            values = (_seconds(before, part), _seconds(after, part))
            scenario = replace(scenario, stable_latency=values[0], canary_latency=values[1])
        else:
            raise ScenarioError(
                f"{part}: unknown scenario (error-ratio=A->B, latency=A->B, "
                f"{', '.join(BROKEN_MEASURING)})"
            )
        shifted = True
    if not shifted:
        scenario = replace(scenario, canary_errors=0.05)  # broken measuring of a bad canary
    return scenario
