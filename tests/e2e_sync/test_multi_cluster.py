"""Two local runtimes (`headway runtime up` twice, each with its own store and API): one
`headway serve` runs against the first; `headway cluster add` registers the second from its
kubeconfig; Applications targeting it by name and by server sync there, and a project that
denies it refuses it. The token in the kubeconfig never shows in `get -o yaml`, `cluster
list` or serve's log."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from e2e_sync.e2e_helpers import API, Remote, default_project, dump, stop_gently
from polling import wait_for

pytestmark = pytest.mark.slow

TOKEN = "e2e-token-that-must-not-leak"


def headway(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "headway", *args], capture_output=True,
                          text=True, timeout=90, check=False)
    if check:
        assert done.returncode == 0, f"headway {' '.join(args)}: {done.stdout}{done.stderr}"
    return done


@pytest.fixture
def runtimes(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """(state dir of the runtime serve runs against, state dir of the second runtime)."""
    first, second = tmp_path / "first", tmp_path / "second"
    started = []
    try:
        for state in (first, second):
            state.mkdir()
            headway("runtime", "up", "--state-dir", str(state))
            started.append(state)
        yield first, second
    finally:
        for state in started:
            headway("runtime", "down", "--state-dir", str(state), check=False)


def _config_map(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
            "data": {"from": name}}


def _app(name: str, url: str, destination: dict[str, str], *, project: str = "default",
         path: str) -> dict[str, Any]:
    return {
        "apiVersion": API, "kind": "Application",
        "metadata": {"name": name, "namespace": "argocd"},
        "spec": {"project": project,
                 "source": {"repoURL": url, "path": path, "targetRevision": "main"},
                 "destination": {**destination, "namespace": "default"},
                 "syncPolicy": {"automated": {}}},
    }


def _locked_project() -> dict[str, Any]:
    project = default_project()
    project["metadata"]["name"] = "locked"
    project["spec"]["destinations"] = [{"name": "!second", "namespace": "*"},
                                       {"server": "*", "namespace": "*"}]
    return project


def _config_maps(state: Path) -> set[str]:
    listed = headway("get", "configmaps", "-n", "default", "-o", "json", "--state-dir",
                     str(state))
    return {item["metadata"]["name"] for item in json.loads(listed.stdout)["items"]}


def _conditions(state: Path, name: str) -> str:
    app = headway("get", "application", name, "-n", "argocd", "-o", "yaml", "--state-dir",
                  str(state)).stdout
    return " ".join(c["message"] for c in (yaml.safe_load(app).get("status") or {}).get(
        "conditions") or [])


def test_apps_sync_into_a_second_runtime_by_name_and_by_server(
    tmp_path: Path, runtimes: tuple[Path, Path]
) -> None:
    first, second = runtimes
    kubeconfig = yaml.safe_load(headway("runtime", "kubeconfig", "--state-dir",
                                        str(second)).stdout)
    kubeconfig["users"][0]["user"] = {"token": TOKEN}  # the local API accepts any caller
    server = kubeconfig["clusters"][0]["cluster"]["server"]
    (tmp_path / "second.kubeconfig").write_text(yaml.safe_dump(kubeconfig))
    headway("cluster", "add", "headway-local", "--from-kubeconfig",
            str(tmp_path / "second.kubeconfig"), "--name", "second", "--state-dir", str(first))
    listed = headway("cluster", "list", "--state-dir", str(first)).stdout
    assert f"second      {server}" in listed and TOKEN not in listed

    remote = Remote(tmp_path / "remote.git")
    remote.commit({f"{n}/cm.yaml": dump(_config_map(n)) for n in ("by-name", "by-server",
                                                                  "denied")})
    (tmp_path / "apps.yaml").write_text(dump(
        default_project(), _locked_project(),
        _app("by-name", remote.url, {"name": "second"}, path="by-name"),
        _app("by-server", remote.url, {"server": server + "/"}, path="by-server"),
        _app("denied", remote.url, {"name": "second"}, project="locked", path="denied"),
    ))
    headway("apply", "-f", str(tmp_path / "apps.yaml"), "--state-dir", str(first))
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        serve = subprocess.Popen(
            [sys.executable, "-m", "headway", "serve", "--state-dir", str(first),
             "--app-poll-seconds", "3600"], stdout=out, stderr=subprocess.STDOUT,
            env=dict(os.environ))
    try:
        wait_for(lambda: {"by-name", "by-server"} <= _config_maps(second), timeout=90,
                 what="both Applications' ConfigMaps in the second runtime")
        wait_for(lambda: "denied by a ! destination" in _conditions(first, "denied"),
                 timeout=60, what="the locked project refusing the second runtime")
        assert "denied" not in _config_maps(second)
        assert not {"by-name", "by-server", "denied"} & _config_maps(first)
        shown = headway("get", "applications", "-n", "argocd", "-o", "yaml", "--state-dir",
                        str(first)).stdout
        assert TOKEN not in shown
    finally:
        stop_gently(serve)
    assert TOKEN not in log.read_text()
