"""The composition API: settings are checked when built, each loop registers the controllers
`controller_names` promises (the demo relies on those names), and `run` ends on either stop."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from itertools import combinations
from pathlib import Path

import httpx2
import pytest

from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
from headway.decisions import SqliteJournal, Subject, journal_path
from headway.engine import ALL_LOOPS, Engine, EngineSettings, Loop, controller_names


@pytest.fixture
def store(tmp_path: Path) -> Iterator[LocalCluster]:
    with LocalCluster(tmp_path / "cluster.db", VirtualClock()) as cluster:
        yield cluster


@pytest.fixture
async def http() -> AsyncIterator[httpx2.AsyncClient]:
    async with httpx2.AsyncClient() as client:
        yield client


def _engine(
    store: LocalCluster, http: httpx2.AsyncClient, tmp_path: Path, loops: frozenset[Loop]
) -> Engine:
    settings = EngineSettings(state_dir=tmp_path / "state", loops=loops)
    return Engine(cluster=store, clock=VirtualClock(), http=http, settings=settings)


@pytest.mark.parametrize(
    "loops",
    [frozenset(c) for n in (1, 2, 4) for c in combinations(Loop, n)],
    ids=lambda loops: "+".join(sorted(loop.value for loop in loops)),
)
async def test_each_loop_registers_the_controllers_its_names_promise(
    store: LocalCluster, http: httpx2.AsyncClient, tmp_path: Path, loops: frozenset[Loop]
) -> None:
    engine = _engine(store, http, tmp_path, loops)
    assert engine.controllers == controller_names(loops)
    for name in engine.controllers:
        assert engine.controller(name).name == name


async def test_an_unknown_controller_name_says_which_are_registered(
    store: LocalCluster, http: httpx2.AsyncClient, tmp_path: Path
) -> None:
    engine = _engine(store, http, tmp_path, frozenset({Loop.ROLLOUTS}))
    with pytest.raises(KeyError, match="registered: rollouts"):
        engine.controller("applications")


@pytest.mark.parametrize(
    ("field", "value"),
    [("app_poll_seconds", 0.0), ("resync_seconds", -1.0), ("metrics_port", 70000)],
)
def test_bad_settings_are_refused_naming_the_field(field: str, value: float) -> None:
    with pytest.raises(ValueError, match=field):
        EngineSettings(**{field: value})  # type: ignore[arg-type]


def test_loops_must_be_loop_members() -> None:
    with pytest.raises(ValueError, match=r"headway\.engine\.Loop"):
        EngineSettings(loops=frozenset({"rollouts"}))  # type: ignore[arg-type]


async def test_run_returns_on_stop_and_on_the_callers_event(
    store: LocalCluster, http: httpx2.AsyncClient, tmp_path: Path
) -> None:
    engine = _engine(store, http, tmp_path, ALL_LOOPS)
    running = asyncio.create_task(engine.run())
    await asyncio.sleep(0)
    assert not running.done()
    engine.stop()
    await asyncio.wait_for(running, timeout=10)

    other = _engine(store, http, tmp_path, ALL_LOOPS)
    stop = asyncio.Event()
    running = asyncio.create_task(other.run(stop))
    await asyncio.sleep(0)
    assert not running.done()
    stop.set()
    await asyncio.wait_for(running, timeout=10)


def test_every_exported_name_is_documented() -> None:
    from headway import engine

    page = (Path(__file__).resolve().parents[2] / "docs" / "embedding.md").read_text()
    public = {name for name in dir(engine) if not name.startswith("_")} - {
        "access",
        "destinations",
        "engine",
        "loops",
        "settings",
    }
    assert public == set(engine.__all__)
    assert [name for name in engine.__all__ if f"`{name}" not in page] == []


async def test_the_engine_keeps_decisions_in_its_state_directory(
    store: LocalCluster, http: httpx2.AsyncClient, tmp_path: Path
) -> None:
    engine = _engine(store, http, tmp_path, frozenset({Loop.ANALYSIS}))
    store.create(
        {
            "apiVersion": "argoproj.io/v1alpha1",
            "kind": "AnalysisRun",
            "metadata": {"name": "run", "namespace": "default"},
            "spec": {"metrics": [{"name": "m", "provider": {"graphite": {"address": "x"}}}]},
        }
    )
    await engine.step()
    engine.close()
    assert store.get("argoproj.io/v1alpha1", "AnalysisRun", "run", "default")["status"][
        "phase"
    ] == "Error"
    journal = SqliteJournal(journal_path(tmp_path / "state"))
    subject = Subject("AnalysisRun", "default", "run")
    [operation] = journal.operations(subject)
    records, _ = journal.records(subject, operation)
    assert [(r.type, r.data["phase"]) for r in records] == [("verdict", "Error")]
    journal.close()
