"""Two `headway serve --kubeconfig` replicas against one API: one serves, the other waits as
a standby; when the leader is killed (SIGKILL: no release), the standby takes over once the
Lease expires, and the Lease names it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest

from polling import wait_for

pytestmark = pytest.mark.slow


def _serve(config: Path, state: Path, log: Path, pod: str) -> subprocess.Popen[bytes]:
    command = [str(Path(sys.executable).parent / "headway"), "serve", "--kubeconfig",
               str(config), "--state-dir", str(state), "--app-poll-seconds", "3600"]
    with log.open("ab") as out:
        return subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT,
                                env={**os.environ, "POD_NAME": pod})


def _holder(config: Path) -> str:
    url = next(line.split()[-1] for line in config.read_text().splitlines() if "server:" in line)
    answer = httpx2.get(f"{url}/apis/coordination.k8s.io/v1/namespaces/argocd/leases/"
                        "headway-controller")
    return str(answer.json().get("spec", {}).get("holderIdentity", "")) if answer.is_success \
        else ""


def test_the_standby_takes_over_when_the_leader_is_killed(
    tmp_path: Path, api: tuple[Path, Path]
) -> None:
    config, _ = api
    logs = {pod: tmp_path / f"{pod}.log" for pod in ("pod-a", "pod-b")}
    first = _serve(config, tmp_path / "a", logs["pod-a"], "pod-a")
    second = None
    try:
        wait_for(lambda: "serving" in logs["pod-a"].read_text(), timeout=60,
                 what="pod-a serving")
        second = _serve(config, tmp_path / "b", logs["pod-b"], "pod-b")
        wait_for(lambda: "held by replica pod-a" in logs["pod-b"].read_text(), timeout=60,
                 what="pod-b waiting as a standby")
        assert "serving" not in logs["pod-b"].read_text()
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
        wait_for(lambda: "serving" in logs["pod-b"].read_text(), timeout=60,
                 what="pod-b serving after the lease expired")
        assert _holder(config) == "pod-b"
    finally:
        for process in (first, second):
            if process is not None and process.poll() is None:
                process.send_signal(signal.SIGTERM)
                process.wait(timeout=30)
