"""A bad release, told: the Rollout controller aborts on a failed AnalysisRun and the
webhook receiver (a real local HTTP server) gets on-rollout-aborted, once, restart or not."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx2
import pytest
from rollout_harness import Harness, rollout, template

from headway.clock import VirtualClock
from notification_receivers import Receiver, RolloutNotifier, serve_receiver, subscribe
from polling import eventually

STEPS = [
    {"setWeight": 25},
    {"analysis": {"templates": [{"templateName": "errors"}]}},
    {"setWeight": 50},
]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    yield from serve_receiver()


@pytest.fixture
async def http() -> AsyncIterator[httpx2.AsyncClient]:
    async with httpx2.AsyncClient() as client:
        yield client


def web(image: str) -> dict[str, object]:
    return subscribe(rollout(image=image, canary={"steps": STEPS}),
                     "on-rollout-aborted", "on-rollout-completed")


async def test_a_failed_analysis_aborts_and_the_receiver_hears_on_rollout_aborted(
    tmp_path: Path, clock: VirtualClock, receiver: Receiver, http: httpx2.AsyncClient
) -> None:
    h = Harness(tmp_path, clock)
    notifier = RolloutNotifier(h.cluster, clock, http, tmp_path / "state", receiver.url)
    h.apply(template("errors"))
    h.apply(web("app:v1"))
    h.settle()
    clock.advance(5)
    h.apply(web("app:v2"))
    h.settle()
    run = next(r["metadata"]["name"] for r in h.runs())
    h.set_run_phase(run, "Failed", 'Metric "errors" assessed Failed due to failed (1) > 0')
    h.settle()
    assert h.status()["abort"] is True
    notifier.step_all()
    await eventually(lambda: not notifier.core.state.outbox, timeout=10, what="every delivery")
    bodies = [json.loads(r.body) for r in receiver.requests]
    assert sorted(b["trigger"] for b in bodies) == ["on-rollout-aborted", "on-rollout-completed"]
    aborted = [b for b in bodies if b["trigger"] == "on-rollout-aborted"]
    assert len(aborted) == 1 and aborted[0]["subject"] == "Rollout default/web"
    assert aborted[0]["message"].startswith("Rollout web was aborted: Rollout aborted update")
    assert run in aborted[0]["message"]
    await notifier.core.worker.stop()
    again = RolloutNotifier(h.cluster, clock, http, tmp_path / "state", receiver.url)
    again.step_all()
    assert await again.core.worker.deliver_due() == 0
    assert len(receiver.requests) == len(bodies)
