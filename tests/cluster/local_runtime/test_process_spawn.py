"""Container processes start with the parent-death signal set by a program of their own
(util-linux `setpriv --pdeathsig KILL`, or without it a Python re-exec program), never by a
`preexec_fn`, and die with the runtime either way; a command that cannot be exec'd is never
started and keeps Python's OSError (a StartError)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from headway import child_process
from headway.cluster.local.kubelet import processes
from polling import wait_for

# The starter runs threads, as the runtime does, and is SIGKILLed once the container runs.
_STARTER = """
import os, signal, sys, threading
from headway import child_process
if sys.argv[2] == "without-setpriv":
    child_process.SETPRIV = None
from headway.cluster.local.kubelet.processes import start_process
for _ in range(4):
    threading.Thread(target=threading.Event().wait, daemon=True).start()
handle = start_process(argv=["sleep", "600"], env={"PATH": os.environ["PATH"]},
                       cwd=sys.argv[1], log_path=sys.argv[1] + "/sleep.log")
print(handle.pid, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def _cmdline(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")[:-1]
    except FileNotFoundError:
        return []


@pytest.mark.parametrize("how", ["with-setpriv", "without-setpriv"])
def test_a_container_dies_when_its_runtime_is_killed(tmp_path: Path, how: str) -> None:
    if how == "with-setpriv" and child_process.SETPRIV is None:
        pytest.skip("util-linux setpriv missing")
    starter = subprocess.Popen(
        [sys.executable, "-c", _STARTER, str(tmp_path), how],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert starter.stdout is not None
        pid = int(starter.stdout.readline())
        starter.wait(timeout=60)
        wait_for(lambda: not processes.process_alive(pid), what="the container killed with it")
    finally:
        if starter.poll() is None:
            starter.kill()
            starter.wait()


def test_without_setpriv_the_command_is_exec_d_behind_python_not_a_preexec_fn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No Python of the runtime runs between fork and exec: the signal is set by a Python
    program of its own, which then execs the command in the same process."""
    monkeypatch.setattr(child_process, "SETPRIV", None)
    started: list[tuple[list[str], dict[str, object]]] = []
    real_popen = subprocess.Popen

    def spy(argv: list[str], **kwargs: object) -> subprocess.Popen[bytes]:
        started.append((list(argv), dict(kwargs)))
        return real_popen(argv, **kwargs)  # type: ignore[call-overload, no-any-return]

    monkeypatch.setattr(subprocess, "Popen", spy)
    env = {"PATH": os.environ["PATH"]}
    handle = processes.start_process(
        argv=["sleep", "600"], env=env, cwd=str(tmp_path), log_path=str(tmp_path / "s.log")
    )
    try:
        [(argv, kwargs)] = started
        assert kwargs.get("preexec_fn") is None
        assert argv[0] == sys.executable and argv[-2:] == ["sleep", "600"]
        wait_for(lambda: _cmdline(handle.pid) == ["sleep", "600"], what="sleep exec'd")
        status = Path(f"/proc/{handle.pid}/status").read_text()
        assert handle.popen.poll() is None and "\nPPid:\t" + str(os.getpid()) in status
    finally:
        handle.popen.kill()
        handle.popen.wait()


@pytest.mark.parametrize("setpriv", [child_process.SETPRIV, None])
def test_a_command_that_cannot_exec_is_never_started_and_raises(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setpriv: str | None
) -> None:
    monkeypatch.setattr(child_process, "SETPRIV", setpriv)
    env = {"PATH": os.environ["PATH"]}
    (tmp_path / "data.txt").write_text("not a program\n")
    log = str(tmp_path / "x.log")
    with pytest.raises(FileNotFoundError, match=r"No such file or directory: 'no-such-command'"):
        processes.start_process(argv=["no-such-command"], env=env, cwd=str(tmp_path), log_path=log)
    missing = str(tmp_path / "missing")
    with pytest.raises(FileNotFoundError, match=r"No such file or directory: '.*missing'"):
        processes.start_process(argv=["sleep", "1"], env=env, cwd=missing, log_path=log)
    with pytest.raises(PermissionError, match=r"Permission denied: '\./data\.txt'"):
        processes.start_process(argv=["./data.txt"], env=env, cwd=str(tmp_path), log_path=log)


def test_the_python_fallback_reports_an_exec_failure_as_127(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only a command that vanished after `start_error` looked: like setpriv, status 127."""
    monkeypatch.setattr(child_process, "SETPRIV", None)
    argv = child_process.dying_with_parent([str(tmp_path / "gone")])
    done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 127
    assert f"{tmp_path / 'gone'}: No such file or directory" in done.stderr


def test_the_start_returns_once_the_death_signal_is_set(tmp_path: Path) -> None:
    """setpriv does not look whether its parent died before it set the signal, so the start
    waits until setpriv has exec'd the command: from then on a killed runtime takes the
    container with it (before, a runtime killed right after a start under load left the
    container running)."""
    if child_process.SETPRIV is None:
        pytest.skip("util-linux setpriv missing")
    handle = processes.start_process(
        argv=["sleep", "600"], env={"PATH": os.environ["PATH"]}, cwd=str(tmp_path),
        log_path=str(tmp_path / "sleep.log"),
    )  # fmt: skip
    try:
        assert os.readlink(f"/proc/{handle.pid}/exe") != os.path.realpath(child_process.SETPRIV)
        assert _cmdline(handle.pid) == ["sleep", "600"]
    finally:
        handle.popen.kill()
        handle.popen.wait()
