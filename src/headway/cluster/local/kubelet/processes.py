"""Real processes for containers: start in their own process group, stop, find leftovers.

Every container process
  * starts in a new session, so it leads its own process group and `stop` signals the
    whole group (a shell's children included);
  * dies with the runtime: `PR_SET_PDEATHSIG` sends it SIGKILL if the runtime's thread
    that started it dies, even when the runtime itself is SIGKILLed. util-linux `setpriv
    --pdeathsig KILL` (without it, a small Python re-exec program) sets it and execs the
    command, so Python can spawn with vfork; a `preexec_fn` doing the same would force a
    full fork of the runtime (24 ms a Pod against 8 ms on the shared machine) and can
    deadlock in a threaded one. A command that cannot be exec'd is never started: its
    OSError is raised as Popen would (a StartError);
  * carries `HEADWAY_RUNTIME_ID` in its environment, so `find_marked_processes` finds
    anything a runtime started (grandchildren too) by scanning `/proc`;
  * writes stdout and stderr to one log file.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from headway.child_process import dying_with_parent, start_error, wait_until_armed

__all__ = [
    "RUNTIME_ID_ENV",
    "ProcessHandle",
    "exit_code_of",
    "find_marked_processes",
    "kill_marked_processes",
    "pids_in_group",
    "process_alive",
    "process_start_ticks",
    "start_process",
]

RUNTIME_ID_ENV = "HEADWAY_RUNTIME_ID"
def exit_code_of(returncode: int) -> int:
    """Popen's negative signal codes as a shell (and the kubelet) report them: 128+signal."""
    return 128 - returncode if returncode < 0 else returncode


@dataclass
class ProcessHandle:
    """A started process; `pgid == pid` because it leads its own group."""

    popen: subprocess.Popen[bytes]
    pid: int
    start_ticks: int
    log_path: str

    def poll(self) -> int | None:
        """The exit code (128+signal when killed by a signal), or None while it runs."""
        code = self.popen.poll()
        return None if code is None else exit_code_of(code)

    def signal_group(self, signum: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signum)

    def group_alive(self) -> bool:
        self.popen.poll()  # reap the leader so it does not linger as a zombie
        return bool(pids_in_group(self.pid))


def start_process(
    *,
    argv: Sequence[str],
    env: Mapping[str, str],
    cwd: str,
    log_path: str,
) -> ProcessHandle:
    """Start `argv` in its own process group with output appended to `log_path`.

    Raises OSError (e.g. FileNotFoundError for a missing executable or working dir)."""
    Path(log_path).parent.mkdir(parents=True, exist_ok=True)
    error = start_error(argv, env, cwd)
    if error is not None:
        raise error
    with open(log_path, "ab") as log:
        popen = subprocess.Popen(
            dying_with_parent(argv),
            env=dict(env),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
        )
    wait_until_armed(popen.pid)  # a runtime killed from here on takes the container with it
    return ProcessHandle(popen, popen.pid, process_start_ticks(popen.pid) or 0, log_path)


def process_start_ticks(pid: int) -> int | None:
    """The process start time in clock ticks since boot (`/proc/PID/stat` field 22)."""
    fields = _stat_fields(pid)
    return int(fields[19]) if fields else None


def _stat_fields(pid: int) -> list[str] | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name is in parentheses and may contain spaces; fields follow the last ')'.
    return raw.rpartition(")")[2].split()


def process_alive(pid: int, start_ticks: int | None = None) -> bool:
    """Whether `pid` runs (not a zombie) and, if given, started at `start_ticks`."""
    fields = _stat_fields(pid)
    if not fields or fields[0] == "Z":
        return False
    return start_ticks is None or int(fields[19]) == start_ticks


def pids_in_group(pgid: int) -> list[int]:
    """Live (non-zombie) processes whose process group is `pgid`."""
    found: list[int] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        fields = _stat_fields(int(entry))
        if fields and fields[0] != "Z" and int(fields[2]) == pgid:
            found.append(int(entry))
    return found


def find_marked_processes(runtime_id: str) -> list[int]:
    """Live processes whose environment carries this runtime's id."""
    marker = f"{RUNTIME_ID_ENV}={runtime_id}".encode()
    found: list[int] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes()
        except OSError:
            continue
        if marker in environ.split(b"\0") and process_alive(int(entry)):
            found.append(int(entry))
    return found


def kill_marked_processes(runtime_id: str, *, grace_seconds: float = 2.0) -> list[int]:
    """SIGTERM every process of this runtime, SIGKILL what is left after the grace period.

    Returns the pids found. Used at start-up and by `runtime down` to leave no orphans."""
    pids = find_marked_processes(runtime_id)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_seconds
    while time.monotonic() < deadline and find_marked_processes(runtime_id):
        time.sleep(0.05)
    for pid in find_marked_processes(runtime_id):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    return pids
