"""The demo's one waiting helper, on a fake clock: it returns the first look that is done,
narrates every look, and gives up after the deadline naming what it waited for and what it
saw last."""

from __future__ import annotations

import pytest

from headway.demo.waiting import WaitTimedOut, wait_until


class FakeTime:
    """A monotonic clock that moves only when the helper sleeps."""

    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def test_returns_the_first_done_look_and_narrates_each_look() -> None:
    clock = FakeTime()
    values = iter([0, 1, 2, 3, 4])
    narrated: list[int] = []
    found = wait_until(
        lambda: next(values),
        lambda n: n >= 3,
        timeout=10,
        what="three",
        progress=narrated.append,
        interval=0.5,
        monotonic=clock.monotonic,
        sleep=clock.sleep,
    )
    assert found == 3
    assert narrated == [0, 1, 2, 3]
    assert clock.slept == [0.5, 0.5, 0.5]


def test_gives_up_after_the_deadline_with_the_last_look() -> None:
    clock = FakeTime()
    looks = iter(range(100))
    with pytest.raises(WaitTimedOut) as caught:
        wait_until(
            lambda: next(looks),
            lambda n: False,
            timeout=1.0,
            what="never",
            interval=0.25,
            monotonic=clock.monotonic,
            sleep=clock.sleep,
        )
    assert caught.value.what == "never"
    assert caught.value.last == 4  # looks at 0, 0.25, 0.5, 0.75 and 1.0 s
    assert clock.now == 101.0
    assert "never did not happen within 1s (last seen: 4)" in str(caught.value)


def test_a_zero_timeout_is_one_look() -> None:
    clock = FakeTime()
    with pytest.raises(WaitTimedOut) as caught:
        wait_until(
            lambda: {"sync": {"status": "OutOfSync"}},
            lambda status: status["sync"]["status"] == "Synced",
            timeout=0,
            what="sync",
            monotonic=clock.monotonic,
            sleep=clock.sleep,
        )
    assert caught.value.last == {"sync": {"status": "OutOfSync"}}
    assert clock.slept == []


def test_a_look_that_raises_ends_the_wait() -> None:
    clock = FakeTime()

    def exited() -> str:
        raise RuntimeError("serve exited")

    with pytest.raises(RuntimeError, match="serve exited"):
        wait_until(
            exited, bool, timeout=10, what="serve", monotonic=clock.monotonic, sleep=clock.sleep
        )
    assert clock.slept == []
