"""`headway.dev/judge`: the canary judged against the stable revision, sequentially.

Configured through Argo Rollouts' plugin syntax, with no successCondition (the judge decides):

    provider:
      plugin:
        headway.dev/judge:
          canaryHash: "{{args.canary-hash}}"
          stableHash: "{{args.stable-hash}}"
          signal: errors          # errors (5xx answers) | latency (requests slower than slowerThan)
          slowerThan: 500ms       # latency only: a bound of the router's latency buckets
          worseBy: 2              # the smallest degradation worth catching, stable's rate x this
          falseAbort: 0.01        # chance of failing a canary no worse than stable
          miss: 0.01              # chance of passing a canary worseBy times worse
          deadline: 5m            # no decision by then: Inconclusive, never a pass
          every: 2s               # how often the router's counters are read
          service: web            # optional: only this service's series
          address: http://127.0.0.1:9464/metrics  # optional: the runtime's metricsAddress
          prometheus: {address, requests, bad}    # optional: counters from Prometheus instead
                                                  # (see `judge_prometheus`)

One measurement is the whole test: it stays in flight (resumed every `every`), each look reads
both revisions' counters from the router and adds the look's evidence
(`headway.analysis.sequential`), and it ends Failed, Successful or, at the deadline,
Inconclusive. The evidence so far is in the measurement's value and metadata, and so is
everything the next look needs, so a restarted controller resumes the test where it was.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from headway.analysis.measurement import MeasurementPhase
from headway.analysis.sequential import Judgement, Look, RatioTest, SequentialState, observe
from headway.clock import Clock
from headway.model.durations import DurationError, parse_duration
from headway.providers import http_edge
from headway.providers.judge_prometheus import (
    PrometheusCounters,
    prometheus_source,
    read_prometheus,
)
from headway.providers.protocol import (
    MeasurementRequest,
    ProviderMeasurement,
    RecordedMeasurement,
    SynchronousProvider,
    decided,
)
from headway.providers.traffic import AddressSource, metrics_url, read_counters
from headway.providers.traffic_window import Counters

if TYPE_CHECKING:  # annotations only: the HTTP client loads with whoever makes a client
    import httpx2

__all__ = [
    "JUDGE_PLUGIN",
    "JudgeConfig",
    "JudgeProvider",
    "SavedEvidence",
    "bad_count",
    "judge_config",
    "judge_phase",
    "next_look",
]

JUDGE_PLUGIN = "headway.dev/judge"
SIGNALS = ("errors", "latency")
TIMEOUT_SECONDS = 10.0
_STATE = "judge.state"
_KNOWN = frozenset(
    {"canaryHash", "stableHash", "signal", "slowerThan", "worseBy", "falseAbort", "miss"}
    | {"deadline", "every", "service", "address", "prometheus"}
)


class JudgeConfigError(ValueError):
    pass


@dataclass(frozen=True)
class JudgeConfig:
    canary_hash: str
    stable_hash: str
    signal: str
    test: RatioTest
    deadline: timedelta
    every: timedelta
    slower_than: float | None = None
    service: str = ""
    address: str = ""
    prometheus: PrometheusCounters | None = None
    """Read the counters from Prometheus instead of the router."""


def _seconds(config: Mapping[str, Any], name: str, default: str) -> timedelta:
    text = str(config.get(name) or default)
    try:
        seconds = parse_duration(text, bare_seconds=False)
    except DurationError as error:
        raise JudgeConfigError(f"plugin.{JUDGE_PLUGIN}.{name}: {error}") from None
    if seconds <= 0:
        raise JudgeConfigError(f"plugin.{JUDGE_PLUGIN}.{name} must be above 0")
    return timedelta(seconds=seconds)


def _number(config: Mapping[str, Any], name: str, default: float) -> float:
    raw = config.get(name, default)
    try:
        return float(str(raw).removesuffix("x"))
    except ValueError:
        raise JudgeConfigError(
            f"plugin.{JUDGE_PLUGIN}.{name} must be a number, not {raw!r}"
        ) from None


def _test(config: Mapping[str, Any]) -> RatioTest:
    try:
        return RatioTest(
            worse_by=_number(config, "worseBy", 2.0),
            false_abort=_number(config, "falseAbort", 0.01),
            miss=_number(config, "miss", 0.01),
        )
    except ValueError as error:
        raise JudgeConfigError(f"plugin.{JUDGE_PLUGIN}: {error}") from None


def judge_config(plugin: Mapping[str, Any] | None) -> JudgeConfig:
    """The judge's settings from a metric's `plugin` block, or `JudgeConfigError` saying which
    field is wrong."""
    config = (plugin or {}).get(JUDGE_PLUGIN)
    if not isinstance(config, Mapping):
        raise JudgeConfigError(f"plugin.{JUDGE_PLUGIN} must be a mapping")
    unknown = sorted(set(config) - _KNOWN)
    if unknown:
        raise JudgeConfigError(f"plugin.{JUDGE_PLUGIN}: unknown field(s) {', '.join(unknown)}")
    for name in ("canaryHash", "stableHash"):
        if not str(config.get(name) or ""):
            raise JudgeConfigError(f"plugin.{JUDGE_PLUGIN}.{name} is required")
    signal = str(config.get("signal") or "errors")
    if signal not in SIGNALS:
        raise JudgeConfigError(f"plugin.{JUDGE_PLUGIN}.signal must be errors or latency")
    prometheus = _prometheus(config)
    router_latency = signal == "latency" and prometheus is None
    slower = _seconds(config, "slowerThan", "1s") if router_latency else None
    if router_latency and "slowerThan" not in config:
        raise JudgeConfigError(f"plugin.{JUDGE_PLUGIN}.slowerThan is required for latency")
    return JudgeConfig(
        canary_hash=str(config["canaryHash"]),
        stable_hash=str(config["stableHash"]),
        signal=signal,
        test=_test(config),
        deadline=_seconds(config, "deadline", "5m"),
        every=_seconds(config, "every", "2s"),
        slower_than=slower.total_seconds() if slower is not None else None,
        service=str(config.get("service") or ""),
        address=str(config.get("address") or ""),
        prometheus=prometheus,
    )


def _prometheus(config: Mapping[str, Any]) -> PrometheusCounters | None:
    if config.get("prometheus") is None:
        return None
    try:
        return prometheus_source(config["prometheus"], f"plugin.{JUDGE_PLUGIN}.prometheus")
    except ValueError as error:
        raise JudgeConfigError(str(error)) from None


def bad_count(counters: Counters, slower_than: float | None) -> float:
    """5xx answers, or (latency) the requests above the largest bucket bound <= slower_than."""
    if slower_than is None:
        return counters.errors
    within = [count for bound, count in counters.buckets if bound <= slower_than]
    return counters.requests - (max(within) if within else 0.0)


def evidence_metadata(config: JudgeConfig, state: SequentialState) -> dict[str, str]:
    """How close the test is to a decision, for `rollouts get` and the dashboard."""
    if config.prometheus is not None:
        what = "bad"
    elif config.signal == "errors":
        what = "5xx"
    else:
        what = f"slower than {config.slower_than:g}s"

    def side(requests: float, bad: float) -> str:
        share = f" ({bad / requests:.2%})" if requests else ""
        return f"{requests:g} requests, {bad:g} {what}{share}"

    return {
        "judge.logRatio": f"{state.log_ratio:.3f}",
        "judge.passBelow": f"{config.test.pass_below:.3f}",
        "judge.failAbove": f"{config.test.fail_above:.3f}",
        "judge.canary": side(state.canary_requests, state.canary_bad),
        "judge.stable": side(state.stable_requests, state.stable_bad),
    }


def evidence_value(config: JudgeConfig, state: SequentialState) -> str:
    return (
        f"log LR {state.log_ratio:.2f} (pass <= {config.test.pass_below:.2f}, "
        f"fail >= {config.test.fail_above:.2f})"
    )


@dataclass(frozen=True)
class SavedEvidence:
    """What a look leaves for the next: the evidence and the counters it read last."""

    state: SequentialState
    last: tuple[float, float, float, float] | None  # canary requests, bad; stable requests, bad

    def dump(self) -> str:
        s = self.state
        totals = [s.canary_requests, s.canary_bad, s.stable_requests, s.stable_bad]
        return json.dumps({"log": s.log_ratio, "totals": totals, "last": self.last})

    @staticmethod
    def load(text: str) -> SavedEvidence:
        raw = json.loads(text)
        cr, cb, sr, sb = (float(x) for x in raw["totals"])
        state = SequentialState(float(raw["log"]), cr, cb, sr, sb)
        last = raw.get("last")
        return SavedEvidence(state, tuple(float(x) for x in last) if last else None)  # type: ignore[arg-type]


def next_look(
    config: JudgeConfig, saved: SavedEvidence, counts: tuple[float, float, float, float]
) -> SavedEvidence:
    """Add what was served since the last reading; a counter that went down (the router
    restarted) only sets a new starting point."""
    if saved.last is None or any(
        now < before for now, before in zip(counts, saved.last, strict=True)
    ):
        return SavedEvidence(saved.state, counts)
    cr, cb, sr, sb = (now - before for now, before in zip(counts, saved.last, strict=True))
    return SavedEvidence(observe(config.test, saved.state, Look(cr, cb, sr, sb)), counts)


class JudgeProvider(SynchronousProvider):
    """Reads the router's per-revision counters; the measurement stays in flight until the
    sequential test decides or the deadline passes."""

    def __init__(
        self, client: httpx2.AsyncClient, clock: Clock, *, default_address: AddressSource = None
    ) -> None:
        self._client = client
        self._clock = clock
        self._default = default_address

    def _address(self, config: JudgeConfig) -> str:
        found = self._default() if callable(self._default) else self._default
        address = config.address or found or ""
        if not address:
            raise JudgeConfigError(
                f"plugin.{JUDGE_PLUGIN}.address is not set and no runtime metrics address is known"
            )
        return metrics_url(address)

    async def _read(self, config: JudgeConfig) -> tuple[float, float, float, float] | str:
        """Both revisions' (requests, bad) as the router (or Prometheus) counts them, or why
        not."""
        if config.prometheus is not None:
            return await read_prometheus(
                self._client,
                config.prometheus,
                canary=config.canary_hash,
                stable=config.stable_hash,
            )
        address = self._address(config)
        answer = await http_edge.send(self._client, "GET", address, timeout_seconds=TIMEOUT_SECONDS)
        if isinstance(answer, http_edge.Failure):
            return f"router metrics at {address}: {answer.reason}"
        try:
            canary, stable = (
                read_counters(answer.text, service=config.service, pod_hash=h) or Counters()
                for h in (config.canary_hash, config.stable_hash)
            )
        except (ValueError, KeyError) as error:
            return f"unreadable metrics from {address}: {error}"
        return (
            canary.requests,
            bad_count(canary, config.slower_than),
            stable.requests,
            bad_count(stable, config.slower_than),
        )

    async def run(self, request: MeasurementRequest) -> ProviderMeasurement:
        return await self._look(request, SavedEvidence(SequentialState(), None))

    async def resume(
        self, request: MeasurementRequest, measurement: RecordedMeasurement
    ) -> ProviderMeasurement:
        try:
            saved = SavedEvidence.load(measurement.metadata[_STATE])
        except (KeyError, ValueError, TypeError) as error:
            return self._error(request, f"the judge's saved evidence is unreadable: {error}")
        # The deadline counts from when the test began, not from this look.
        return await self._look(replace(request, started_at=measurement.started_at), saved)

    async def _look(self, request: MeasurementRequest, saved: SavedEvidence) -> ProviderMeasurement:
        try:
            config = judge_config(request.metric.provider.plugin)
            counts = await self._read(config)
        except JudgeConfigError as bad_config:
            return self._error(request, str(bad_config))
        now = self._clock.now()
        if isinstance(counts, str):
            return verdict(request, config, saved, now=now, problem=counts)
        return verdict(request, config, next_look(config, saved, counts), now=now)


def judge_phase(
    config: JudgeConfig, state: SequentialState, *, elapsed: timedelta
) -> MeasurementPhase | None:
    """The test's decision: Failed, Successful, Inconclusive once the deadline has passed
    without one, or None to keep looking. The drill decides with this too."""
    judgement = state.judgement(config.test)
    if judgement is Judgement.FAIL:
        return MeasurementPhase.FAILED
    if judgement is Judgement.PASS:
        return MeasurementPhase.SUCCESSFUL
    return MeasurementPhase.INCONCLUSIVE if elapsed >= config.deadline else None


def _message(config: JudgeConfig, phase: MeasurementPhase, metadata: Mapping[str, str]) -> str:
    sides = f"{metadata['judge.canary']} against {metadata['judge.stable']}"
    if phase is MeasurementPhase.FAILED:
        return f"the canary is worse than stable: {sides}"
    if phase is MeasurementPhase.SUCCESSFUL:
        return f"the canary is no more than {config.test.worse_by:g}x worse than stable: {sides}"
    return f"no decision by the deadline ({config.deadline}): too little evidence, {sides}"


def verdict(
    request: MeasurementRequest,
    config: JudgeConfig,
    saved: SavedEvidence,
    *,
    now: datetime,
    problem: str = "",
) -> ProviderMeasurement:
    """Failed or Successful once the test decides; Inconclusive at the deadline; else in
    flight until the next look."""
    state = saved.state
    metadata = {**evidence_metadata(config, state), _STATE: saved.dump()}
    value = evidence_value(config, state)
    failed_reading = f"last reading failed: {problem}" if problem else ""
    phase = judge_phase(config, state, elapsed=now - request.started_at)
    if phase is None:
        return ProviderMeasurement(
            MeasurementPhase.RUNNING,
            request.started_at,
            None,
            message=failed_reading,
            value=value,
            metadata=metadata,
            resume_at=min(now + config.every, request.started_at + config.deadline),
        )
    message = f"{_message(config, phase, metadata)} ({value})"
    if failed_reading:
        message += f"; {failed_reading}"
    measurement = decided(request, phase, message, finished_at=now, metadata=metadata)
    return replace(measurement, value=value)
