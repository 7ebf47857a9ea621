"""HAProxy must never outlive the Headway process that started it, even one killed with -9;
and it is started without Python code between fork and exec (a `preexec_fn` can deadlock in
the child of a threaded parent), through `setpriv --pdeathsig KILL`."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import require_program
from headway.routers.dataplane.haproxy.router import HAProxyRouter
from polling import wait_for

pytestmark = pytest.mark.haproxy

_STARTER = """
import asyncio, sys
from pathlib import Path
from headway import child_process
if sys.argv[3] == "without-setpriv":
    child_process.SETPRIV = None
from headway.routers.dataplane.haproxy.router import HAProxyRouter

async def main() -> None:
    router = HAProxyRouter(work_dir=Path(sys.argv[1]), binary=sys.argv[2])
    await router.start()
    print(router.pid, flush=True)
    await asyncio.sleep(3600)

asyncio.run(main())
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except FileNotFoundError:
        return False
    return state != "Z"


@pytest.mark.parametrize("how", ["with-setpriv", "without-setpriv"])
def test_haproxy_dies_when_its_parent_is_killed(tmp_path: Path, how: str) -> None:
    """Without setpriv too (before, HAProxy then started plainly and outlived its parent)."""
    binary = require_program("haproxy")
    starter = subprocess.Popen(
        [sys.executable, "-c", _STARTER, str(tmp_path / "h"), binary, how],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert starter.stdout is not None
        haproxy_pid = int(starter.stdout.readline())
        assert _alive(haproxy_pid)
        os.kill(starter.pid, signal.SIGKILL)
        starter.wait(timeout=10)
        wait_for(
            lambda: not _alive(haproxy_pid),
            timeout=10,
            what="HAProxy to exit with the process that started it",
        )
    finally:
        if starter.poll() is None:
            starter.kill()
            starter.wait()


async def test_haproxy_starts_through_setpriv_without_a_preexec_fn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    binary = require_program("haproxy")
    setpriv = require_program("setpriv")
    started: list[tuple[list[str], dict[str, object]]] = []
    real_popen = subprocess.Popen

    def spy(argv: list[str], **kwargs: object) -> subprocess.Popen[bytes]:
        started.append((list(argv), dict(kwargs)))
        return real_popen(argv, **kwargs)  # type: ignore[call-overload, no-any-return]

    monkeypatch.setattr(subprocess, "Popen", spy)
    router = HAProxyRouter(work_dir=tmp_path / "h", binary=binary)
    await router.start()
    try:
        [(argv, kwargs)] = started
        assert kwargs.get("preexec_fn") is None
        assert argv[:4] == [setpriv, "--pdeathsig", "KILL", "--"] and argv[4] == binary
        assert router.pid is not None  # setpriv exec'd HAProxy: the same process
        assert Path(f"/proc/{router.pid}/exe").resolve() == Path(binary).resolve()
    finally:
        await router.close()
