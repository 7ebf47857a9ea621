"""What a Pod's processes use now, read from /proc, as cAdvisor reports it to metrics-server.

CPU is a rate: the CPU seconds (user + system) of every process in the Pod's containers'
process groups between two reads, over the real time between them (CPU seconds are real,
so this is one of the few places that must not use the virtual clock). A Pod's first read
has no rate yet (None), as metrics-server needs two scrapes. Memory is the resident set of
those processes, in bytes. Processes that exited between reads take their CPU time with
them; the rate of that interval reads low, as a container restart does on a node.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from headway.cluster.local.kubelet.processes import pids_in_group

__all__ = ["PodUsage", "UsageMeter", "group_cpu_seconds", "group_memory_bytes"]

_TICKS = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")


@dataclass(frozen=True)
class PodUsage:
    cpu_cores: float | None
    memory_bytes: float | None


def _stat_fields(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return []
    return raw.rpartition(")")[2].split()


def group_cpu_seconds(groups: Iterable[int]) -> float:
    """User + system CPU seconds of the live processes of `groups` (fields 14 and 15)."""
    ticks = 0
    for group in groups:
        for pid in pids_in_group(group):
            fields = _stat_fields(pid)
            if len(fields) > 12:
                ticks += int(fields[11]) + int(fields[12])
    return ticks / _TICKS


def group_memory_bytes(groups: Iterable[int]) -> float:
    """Resident bytes of the live processes of `groups` (`/proc/PID/statm`, second field)."""
    pages = 0
    for group in groups:
        for pid in pids_in_group(group):
            try:
                pages += int(Path(f"/proc/{pid}/statm").read_text().split()[1])
            except (OSError, IndexError, ValueError):
                continue
    return float(pages * _PAGE)


class UsageMeter:
    """Per Pod uid, the last (CPU seconds, real time) read and the rate it gave. Reads closer
    together than `min_interval` return the last rate (a step can run many times a second)."""

    def __init__(self, groups_of: Callable[[str], list[int]], *,
                 wall: Callable[[], float] = time.monotonic, min_interval: float = 1.0) -> None:
        self._groups_of = groups_of
        self._wall = wall
        self._min_interval = min_interval
        self._last: dict[str, tuple[float, float, float | None]] = {}

    def usage(self, uid: str) -> PodUsage:
        groups = self._groups_of(uid)
        if not groups:
            self._last.pop(uid, None)
            return PodUsage(None, None)
        cpu, now = group_cpu_seconds(groups), self._wall()
        before = self._last.get(uid)
        if before is None:
            self._last[uid] = (cpu, now, None)
            rate = None
        elif now - before[1] < self._min_interval:
            rate = before[2]
        else:
            rate = max(0.0, (cpu - before[0]) / (now - before[1]))
            self._last[uid] = (cpu, now, rate)
        return PodUsage(rate, group_memory_bytes(groups))

    def forget_except(self, uids: Iterable[str]) -> None:
        keep = set(uids)
        self._last = {uid: v for uid, v in self._last.items() if uid in keep}
