"""Container processes start through `setpriv --pdeathsig KILL` (a vfork spawn) and still die
with the runtime; a command that cannot be exec'd keeps Python's OSError (a StartError)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from headway import child_process
from headway.cluster.local.kubelet import processes
from polling import wait_for

pytestmark = pytest.mark.skipif(child_process.SETPRIV is None, reason="util-linux setpriv missing")

_STARTER = """
import os, signal, sys
from headway.cluster.local.kubelet.processes import start_process
handle = start_process(argv=["sleep", "600"], env={"PATH": os.environ["PATH"]},
                       cwd=sys.argv[1], log_path=sys.argv[1] + "/sleep.log")
print(handle.pid, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_container_started_through_setpriv_dies_when_its_runtime_is_killed(
    tmp_path: Path,
) -> None:
    starter = subprocess.run(
        [sys.executable, "-c", _STARTER, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    pid = int(starter.stdout.split()[0])
    wait_for(lambda: not processes.process_alive(pid), what="the container killed with it")


def test_a_command_that_cannot_exec_is_started_directly_and_raises(tmp_path: Path) -> None:
    env = {"PATH": os.environ["PATH"]}
    assert child_process.runnable_behind_setpriv(["sleep", "1"], env, str(tmp_path)) is not None
    assert child_process.runnable_behind_setpriv(["no-such-command"], env, str(tmp_path)) is None
    assert child_process.runnable_behind_setpriv(["sleep"], env, str(tmp_path / "missing")) is None
    with pytest.raises(FileNotFoundError):
        processes.start_process(
            argv=["no-such-command"], env=env, cwd=str(tmp_path), log_path=str(tmp_path / "x.log")
        )
