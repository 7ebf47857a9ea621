"""`headway serve`'s garbage collector policy: what it does at start-up, at the first full
pass and later, and that the serve loop (`Manager.run`, `headway serve`) applies it. The
collector is a recording fake: freezing the test process's heap would outlive the test."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
from headway.controllers import collector_policy
from headway.controllers.collector_policy import (
    REFREEZE_RATIO,
    YOUNG_THRESHOLD,
    CollectorPolicy,
    PassSummary,
    refreeze_due,
)
from headway.controllers.manager import Manager, ObjectKey
from headway.model.obj import Obj


class FakeCollector:
    """Records what the policy asks of the collector; `frozen`/`survivors` are set by tests.
    `on_freeze` runs at each freeze (a test stops the serve loop there)."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.frozen_objects = 1000
        self.surviving = 0
        self.on_freeze: list[object] = []

    def collect(self) -> None:
        self.calls.append("collect")

    def freeze(self) -> None:
        self.calls.append("freeze")
        for hook in self.on_freeze:
            assert callable(hook)
            hook()

    def unfreeze(self) -> None:
        self.calls.append("unfreeze")

    def frozen(self) -> int:
        return self.frozen_objects

    def survivors(self) -> int:
        return self.surviving

    def set_young_threshold(self, allocations: int) -> None:
        self.calls.append(f"threshold {allocations}")


def _full(keys: int = 3) -> PassSummary:
    return PassSummary(steps=keys, keys=keys, caught_up=True)


def test_start_up_raises_the_young_threshold_then_collects_and_freezes() -> None:
    fake = FakeCollector()
    policy = CollectorPolicy(fake)
    policy.started()
    assert fake.calls == [f"threshold {YOUNG_THRESHOLD}", "collect", "freeze"]
    assert YOUNG_THRESHOLD > 700  # CPython's own
    policy.started()  # the loop run again: start-up is over
    assert fake.calls == [f"threshold {YOUNG_THRESHOLD}", "collect", "freeze"]


def test_the_first_full_pass_freezes_once_every_key_was_stepped_and_nothing_is_due() -> None:
    fake = FakeCollector()
    policy = CollectorPolicy(fake)
    policy.after_pass(PassSummary(steps=2, keys=5, caught_up=False))
    policy.after_pass(PassSummary(steps=2, keys=5, caught_up=True))  # 4 of 5 keys
    assert fake.calls == []
    policy.after_pass(PassSummary(steps=2, keys=5, caught_up=False))  # 6, but more is due
    assert fake.calls == []
    policy.after_pass(PassSummary(steps=0, keys=5, caught_up=True))
    assert fake.calls == ["collect", "freeze"]
    assert (policy.freezes, policy.refreezes) == (1, 0)


def test_later_full_passes_refreeze_only_once_the_survivors_outgrow_a_quarter() -> None:
    fake = FakeCollector()
    policy = CollectorPolicy(fake)
    policy.after_pass(_full())
    fake.calls.clear()
    fake.surviving = int(fake.frozen_objects * REFREEZE_RATIO)  # not more than a quarter
    for _ in range(3):
        policy.after_pass(_full())
    assert fake.calls == []
    fake.surviving += 1
    policy.after_pass(PassSummary(steps=2, keys=3, caught_up=True))  # not a full pass yet
    assert fake.calls == []
    policy.after_pass(PassSummary(steps=1, keys=3, caught_up=True))
    assert fake.calls == ["unfreeze", "collect", "freeze"]
    assert (policy.freezes, policy.refreezes) == (2, 1)


def test_refreeze_due_is_strictly_more_than_the_ratio() -> None:
    assert not refreeze_due(survivors=250, frozen=1000)
    assert refreeze_due(survivors=251, frozen=1000)
    assert refreeze_due(survivors=1, frozen=0)
    assert not refreeze_due(survivors=0, frozen=0)


def test_python_collector_freezes_and_counts_the_real_collector() -> None:
    """The one edge, against CPython's collector; what it froze is unfrozen again."""
    import gc

    real = collector_policy.PythonCollector()
    threshold = gc.get_threshold()
    before = gc.get_freeze_count()
    try:
        real.set_young_threshold(1234)
        assert gc.get_threshold() == (1234, *threshold[1:])
        kept = [{"n": n} for n in range(100)]
        real.collect()
        real.freeze()
        assert real.frozen() >= before + len(kept)
        assert real.survivors() == len(gc.get_objects(generation=2))
    finally:
        real.unfreeze()
        gc.set_threshold(*threshold)
    assert gc.get_freeze_count() == 0


class Steps:
    """A controller of `keys` keys that records how many steps ran before each freeze."""

    name = "steps"
    watches: tuple[tuple[str, str], ...] = ()

    def __init__(self) -> None:
        self.stepped: list[ObjectKey] = []

    def keys_for(self, obj: Obj) -> Iterable[ObjectKey]:
        return []

    def step(self, key: ObjectKey) -> float | None:
        self.stepped.append(key)
        return 3600.0  # looked at again much later: after one full pass, nothing is due


async def test_the_serve_loop_applies_the_policy_at_start_up_and_after_the_first_full_pass(
    tmp_path: Path,
) -> None:
    fake = FakeCollector()
    stop = asyncio.Event()
    controller = Steps()
    steps_at_freeze: list[int] = []
    fake.on_freeze.append(lambda: steps_at_freeze.append(len(controller.stepped)))
    fake.on_freeze.append(lambda: stop.set() if len(steps_at_freeze) == 2 else None)
    with LocalCluster(tmp_path / "cluster.db", VirtualClock()) as store:
        manager = Manager(store, VirtualClock(), steps_per_pass=4)
        manager.register(controller)
        for n in range(10):
            manager.enqueue("steps", ObjectKey("default", f"k{n}"))
        await asyncio.wait_for(
            manager.run(stop, poll_seconds=0.01, collector=CollectorPolicy(fake)), timeout=30
        )
    # frozen at start-up, before any step; then once all 10 keys were stepped (3 passes of
    # at most 4 steps), not before
    assert steps_at_freeze == [0, 10]
    assert fake.calls == [f"threshold {YOUNG_THRESHOLD}", "collect", "freeze", "collect", "freeze"]


async def test_the_serve_loop_without_a_policy_leaves_the_collector_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[FakeCollector] = []
    monkeypatch.setattr(collector_policy, "PythonCollector", lambda: made.append(FakeCollector()))
    stop = asyncio.Event()
    with LocalCluster(tmp_path / "cluster.db", VirtualClock()) as store:
        manager = Manager(store, VirtualClock())
        controller = Steps()
        manager.register(controller)
        manager.enqueue("steps", ObjectKey("default", "only"))
        running = asyncio.create_task(manager.run(stop, poll_seconds=0.01))
        while not controller.stepped:
            await asyncio.sleep(0.01)
        stop.set()
        await asyncio.wait_for(running, timeout=30)
    assert made == []


def _serve_engine_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, tune_gc: bool
) -> list[FakeCollector]:
    """`headway serve`'s engine run on an empty store, with the process's collector replaced
    by fakes (each one made is returned); stopped at the first full pass's freeze, or after a
    few passes when there is no policy."""
    from headway.cli import serve as serve_module
    from headway.cli.targets import Target
    from headway.engine import EngineSettings

    made: list[FakeCollector] = []
    stop = asyncio.Event()

    def fake_collector() -> FakeCollector:
        fake = FakeCollector()
        fake.on_freeze.append(lambda: stop.set() if fake.calls.count("freeze") == 2 else None)
        made.append(fake)
        return fake

    monkeypatch.setattr(collector_policy, "PythonCollector", fake_collector)
    passes = 0
    run_once = Manager.run_once

    async def counted_pass(manager: Manager) -> int:
        nonlocal passes
        passes += 1
        if not tune_gc and passes == 5:
            stop.set()
        return await run_once(manager)

    monkeypatch.setattr(Manager, "run_once", counted_pass)
    settings = EngineSettings(state_dir=tmp_path / "state")
    settings.state_dir.mkdir()
    clock = VirtualClock()
    with LocalCluster(tmp_path / "cluster.db", clock) as store:
        run = serve_module._run_engine(
            settings, Target(settings.state_dir), store, clock, stop,
            ui=serve_module.UiSettings(), tune_gc=tune_gc,
        )
        asyncio.run(asyncio.wait_for(run, timeout=60))
    return made


def test_headway_serve_runs_its_engine_under_the_policy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    [fake] = _serve_engine_runs(tmp_path, monkeypatch, tune_gc=True)
    assert fake.calls == [f"threshold {YOUNG_THRESHOLD}", "collect", "freeze", "collect", "freeze"]


def test_headway_serve_no_tune_gc_runs_its_engine_without_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _serve_engine_runs(tmp_path, monkeypatch, tune_gc=False) == []


def test_the_tune_gc_flag_reaches_serve(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from headway.cli import serve as serve_module
    from headway.cli.main import _register_all, app

    _register_all()
    seen: list[object] = []

    async def record(*_: object, tune_gc: bool) -> None:
        seen.append(tune_gc)

    monkeypatch.setattr(serve_module, "serve", record)
    state = str(tmp_path / "s")
    for flags in ([], ["--no-tune-gc"], ["--tune-gc"]):
        result = CliRunner().invoke(app, ["serve", "--state-dir", state, *flags])
        assert result.exit_code == 0, result.output
    assert seen == [True, False, True]


def test_with_no_keys_the_first_idle_pass_is_full_and_later_ones_need_a_step() -> None:
    fake = FakeCollector()
    policy = CollectorPolicy(fake)
    policy.after_pass(PassSummary(steps=0, keys=0, caught_up=True))
    assert fake.calls == ["collect", "freeze"]
    fake.surviving = fake.frozen_objects  # a re-freeze would be due at a full pass
    for _ in range(5):
        policy.after_pass(PassSummary(steps=0, keys=0, caught_up=True))
    assert fake.calls == ["collect", "freeze"]
    policy.after_pass(PassSummary(steps=1, keys=0, caught_up=True))
    assert fake.calls[2:] == ["unfreeze", "collect", "freeze"]
