"""The render identity a `SourceReader` carries between commits (`_KnownIdentity`, whose
`shas` moves in place) stays right when one app is refreshed from two threads at once.

`headway serve` never does that (one manager steps every controller in turn, on one thread),
but the carry-over does not depend on it: an identity's fingerprint and paths never change,
and `shas` is only ever set to commits at which that fingerprint was checked to hold, so any
value a thread reads is a valid starting point. A hook holds two threads inside the check
(`_untouched`) until both have read the same identity, so their writes interleave."""

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


def _state(reader: SourceReader, raw: dict[str, Any], sha: str) -> DesiredState:
    parsed, _ = parse_application(Document(raw, "test", 0, 0))
    assert parsed is not None
    state = reader.desired(parsed, raw, revisions=(sha,))
    assert not state.errors, state.errors
    return state


def _names(state: DesiredState) -> list[tuple[str, Any]]:
    return [(o["metadata"]["name"], (o.get("data") or {}).get("v")) for o in state.objects]


def _hold_both_in_the_check(reader: SourceReader) -> None:
    """Test hook: each of two threads waits in `_untouched` for the other."""
    barrier = threading.Barrier(2, timeout=30)
    check: Callable[..., bool] = reader._untouched

    def held(*args: Any) -> bool:
        barrier.wait()
        return check(*args)

    reader._untouched = held  # type: ignore[method-assign]


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


def test_one_app_carried_to_two_commits_from_two_threads(tmp_path: Path) -> None:
    """Two commits, one leaving the app's path alone and one changing it, each refreshed on
    its own thread from the same kept identity; then each commit again on one thread: every
    answer is what a reader with empty caches gives at that commit."""
    remote = Remote(tmp_path / "remote.git")
    base = remote.commit({"apps/web/cm.yaml": manifests(config_map("web")), "other/x": "1"})
    elsewhere = remote.commit({"other/x": "2"})
    remote.commit({"other/x": "1"})
    changed_web = {**config_map("web"), "data": {"v": "2"}}
    changed = remote.commit({"apps/web/cm.yaml": manifests(changed_web)})
    reader = SourceReader(git=GitCache(tmp_path / "cache"), clock=VirtualClock())
    raw = application("web", remote.url, path="apps/web")
    for name, target in (("warm-a", elsewhere), ("warm-b", changed)):
        # other apps at the same path fill the commit-pair caches: the threads below then
        # only read the reader's dictionaries and the kept identity
        other = application(name, remote.url, path="apps/web")
        _state(reader, other, base)
        _state(reader, other, target)
    first = _state(reader, raw, base)

    _hold_both_in_the_check(reader)
    kept, moved = _in_threads([
        lambda: _state(reader, raw, elsewhere),
        lambda: _state(reader, raw, changed),
    ])  # fmt: skip

    fresh = SourceReader(git=GitCache(tmp_path / "fresh"), clock=VirtualClock())
    for state, sha in ((kept, elsewhere), (moved, changed)):
        expected = _state(fresh, raw, sha)
        assert (state.revision, state.fingerprint) == (sha, expected.fingerprint)
        assert _names(state) == _names(expected)
    assert kept.fingerprint == first.fingerprint != moved.fingerprint
    assert _names(moved) == [("web", "2")]

    reader._untouched = SourceReader._untouched.__get__(reader)  # type: ignore[method-assign]
    for sha in (elsewhere, changed, base, changed):
        assert _state(reader, raw, sha).fingerprint == _state(fresh, raw, sha).fingerprint
