"""Render identities carried to a new commit a group at a time (`kept_identities`) stay right
when two apps of one group are refreshed from two threads at once, one of them an app the
commit changed.

`headway serve` never does that (one manager steps every controller in turn, on one thread),
but the carry-over does not depend on it: a move detaches the changed app's record before it
sets the group's commits, and a lookup that reads the new commits checks afterwards that its
record is still in the group. A hook holds both threads at the door of the move until both
have read the group at the old commit."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from app_harness import Remote, application, config_map, manifests

from headway.clock import VirtualClock
from headway.controllers.app.sources import DesiredState, SourceReader
from headway.model.application import parse_application
from headway.model.yamlload import Document
from headway.source.git import GitCache


def _state(reader: SourceReader, raw: dict[str, Any]) -> DesiredState:
    parsed, _ = parse_application(Document(raw, "test", 0, 0))
    assert parsed is not None
    return reader.desired(parsed, raw)


def _names(state: DesiredState) -> list[tuple[str, Any]]:
    return [(o["metadata"]["name"], (o.get("data") or {}).get("v")) for o in state.objects]


def _hold_both_at_the_move(reader: SourceReader) -> None:
    """Test hook: each of two threads waits at the group's move for the other."""
    identities = reader._identities
    barrier = threading.Barrier(2, timeout=30)
    move: Callable[..., bool] = identities._move

    def held(*args: Any) -> bool:
        barrier.wait()
        return move(*args)

    identities._move = held  # type: ignore[method-assign]


def _in_threads(calls: Sequence[Callable[[], DesiredState]]) -> list[DesiredState]:
    results: list[DesiredState | BaseException | None] = [None] * len(calls)

    def run(index: int) -> None:
        try:
            results[index] = calls[index]()
        except BaseException as err:  # handed to the test thread below
            results[index] = err

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    states = []
    for result in results:
        if isinstance(result, BaseException):
            raise result
        assert isinstance(result, DesiredState)
        states.append(result)
    return states


def test_a_changed_and_an_untouched_app_of_one_group_from_two_threads(tmp_path: Path) -> None:
    remote = Remote(tmp_path / "remote.git")
    remote.commit({
        "apps/web/cm.yaml": manifests(config_map("web")),
        "apps/api/cm.yaml": manifests(config_map("api")),
    })  # fmt: skip
    reader = SourceReader(git=GitCache(tmp_path / "cache"), clock=VirtualClock())
    web = application("web", remote.url, path="apps/web")
    api = application("api", remote.url, path="apps/api")
    before = {name: _state(reader, raw) for name, raw in (("web", web), ("api", api))}

    edited = {**config_map("web"), "data": {"v": "2"}}
    changed = remote.commit({"apps/web/cm.yaml": manifests(edited)})
    reader.mark_changed(remote.url)
    # Fetch and resolve on this thread, through an app whose path does not exist (so no
    # identity is kept or moved): the two threads below only read and move identities.
    probe = application("probe", remote.url, path="no/such")
    assert _state(reader, probe).errors
    assert reader._identities.moves == 0

    _hold_both_at_the_move(reader)
    moved_web, kept_api = _in_threads([lambda: _state(reader, web), lambda: _state(reader, api)])

    fresh = SourceReader(git=GitCache(tmp_path / "fresh"), clock=VirtualClock())
    for state, raw in ((moved_web, web), (kept_api, api)):
        expected = _state(fresh, raw)
        assert (state.revision, state.fingerprint) == (changed, expected.fingerprint)
        assert _names(state) == _names(expected)
    assert _names(moved_web) == [("web", "2")]
    assert moved_web.fingerprint != before["web"].fingerprint
    assert kept_api.fingerprint == before["api"].fingerprint
    assert (reader._identities.moves, reader._identities.detached) == (1, 1)
