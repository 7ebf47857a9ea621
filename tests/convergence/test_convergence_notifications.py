"""After an abort, the receiver (a real local HTTP server) hears whether the revert reached
Git: on-revert-committed with the commit, or on-revert-failed with the reason."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx2
import pytest
from convergence_harness import NS, Harness
from gitwork import WorkRepo, rollout_yaml

from headway.clock import VirtualClock
from notification_receivers import Receiver, RolloutNotifier, serve_receiver, subscribe
from polling import eventually

TRIGGERS = ("on-revert-committed", "on-revert-failed")


@pytest.fixture
def work(tmp_path: Path) -> WorkRepo:
    repo = WorkRepo(tmp_path / "gitops")
    repo.commit({"apps/web/rollout.yaml": rollout_yaml("v2")}, "release web v2")
    repo.commit({"apps/web/rollout.yaml": rollout_yaml("v3")}, "release web v3")
    return repo


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    yield from serve_receiver()


@pytest.fixture
async def http() -> AsyncIterator[httpx2.AsyncClient]:
    async with httpx2.AsyncClient() as client:
        yield client


async def heard(h: Harness, notifier: RolloutNotifier, receiver: Receiver) -> list[dict[str, str]]:
    subscription = subscribe({"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout",
                              "metadata": {"name": "web", "namespace": NS}}, *TRIGGERS)
    h.cluster.apply(subscription, field_manager="subscriber")
    h.step()
    notifier.step_all()
    await eventually(lambda: receiver.requests, timeout=10, what="a notification")
    await notifier.core.worker.stop()
    return [json.loads(r.body) for r in receiver.requests]


async def test_a_committed_revert_is_announced_with_its_commit(
    tmp_path: Path, clock: VirtualClock, work: WorkRepo, receiver: Receiver,
    http: httpx2.AsyncClient,
) -> None:
    h = Harness(tmp_path, clock, work.url)
    notifier = RolloutNotifier(h.cluster, clock, http, tmp_path / "state", receiver.url)
    h.abort(stable="shop/web:v2", failed="shop/web:v3")
    bodies = await heard(h, notifier, receiver)
    assert [b["trigger"] for b in bodies] == ["on-revert-committed"]
    assert work.tip()[:7] in bodies[0]["message"]


async def test_a_revert_that_could_not_be_committed_is_announced_as_failed(
    tmp_path: Path, clock: VirtualClock, work: WorkRepo, receiver: Receiver,
    http: httpx2.AsyncClient,
) -> None:
    h = Harness(tmp_path, clock, work.url)
    notifier = RolloutNotifier(h.cluster, clock, http, tmp_path / "state", receiver.url)
    h.abort(stable="shop/web:v2", failed="shop/web:v3")
    work.commit({"apps/web/rollout.yaml": rollout_yaml("v4")}, "release web v4")
    bodies = await heard(h, notifier, receiver)
    assert [b["trigger"] for b in bodies] == ["on-revert-failed"]
    assert "branch moved" in bodies[0]["message"]
