"""`headway runtime kubeconfig`, and where the API listens."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import yaml

from headway.cli.runtime import kubeconfig_text
from headway.clock import SystemClock
from headway.cluster.local.api.kubeapi.server import ApiServer, ApiServerError
from kubeapi.conftest import Kubectl, headway


def test_the_api_listens_on_loopback_only(tmp_path: Path) -> None:
    server = ApiServer(db_path=tmp_path / "cluster.db", clock=SystemClock())
    try:
        host, _, port = server.address.partition(":")
        assert host == "127.0.0.1" and int(port) > 0
    finally:
        server.stop()


def test_a_taken_port_is_a_clear_error(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        try:
            ApiServer(db_path=tmp_path / "cluster.db", clock=SystemClock(), port=port)
        except ApiServerError as error:
            assert f"--api-port {port}" in str(error)
        else:
            raise AssertionError("the API started on a port already in use")


def test_the_kubeconfig_names_the_server_and_the_headway_local_context() -> None:
    config = yaml.safe_load(kubeconfig_text("http://127.0.0.1:6443"))
    assert config["current-context"] == "headway-local"
    (cluster,) = config["clusters"]
    assert cluster["cluster"]["server"] == "http://127.0.0.1:6443"
    (context,) = config["contexts"]
    assert context["context"]["cluster"] == cluster["name"]


def test_kubeconfig_without_a_running_runtime_says_so(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "headway", "runtime", "kubeconfig", "--state-dir",
         str(tmp_path)], capture_output=True, text=True, timeout=60, check=False,
    )
    assert done.returncode == 1
    assert "no runtime serves a Kubernetes API" in done.stderr
    assert "Traceback" not in done.stderr


def test_up_while_running_says_the_api_port_is_read_at_start(kubectl: Kubectl) -> None:
    again = headway("runtime", "up", "--state-dir", str(kubectl.state_dir), "--api-port", "1")
    assert again.returncode == 0
    assert "runtime already running" in again.stdout
    assert "--api-port is read at start" in again.stdout
    status = headway("runtime", "status", "--state-dir", str(kubectl.state_dir)).stdout
    server = yaml.safe_load(kubectl.kubeconfig.read_text())["clusters"][0]["cluster"]["server"]
    assert f"api:     {server}" in status
