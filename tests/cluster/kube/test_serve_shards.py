"""Two `headway serve --kubeconfig --shards 2` replicas (shard 0 and shard 1) against one
management API, with a second API registered by a cluster Secret that puts it on shard 1:
each replica syncs only the Applications whose destination cluster its shard owns, leads
through its own Lease, and writes nothing to the other shard's apps."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from e2e_sync.e2e_helpers import API, Remote, default_project, dump, stop_gently
from headway.cli.runtime import kubeconfig_text
from headway.clock import SystemClock
from headway.cluster.errors import NotFound
from headway.cluster.local import LocalCluster
from headway.cluster.local.api.kubeapi.server import ApiServer
from polling import wait_for

pytestmark = pytest.mark.slow


@pytest.fixture
def second_api(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """(URL, store file) of the destination cluster's API."""
    db = tmp_path / "second" / "cluster.db"
    db.parent.mkdir()
    server = ApiServer(db_path=db, clock=SystemClock())
    server.start()
    try:
        yield f"http://{server.address}", db
    finally:
        server.stop()


def _serve(config: Path, state: Path, log: Path, shard: int) -> subprocess.Popen[bytes]:
    command = [str(Path(sys.executable).parent / "headway"), "serve", "--kubeconfig",
               str(config), "--state-dir", str(state), "--app-poll-seconds", "3600",
               "--shards", "2", "--shard", str(shard)]
    with log.open("ab") as out:
        return subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT,
                                env={**os.environ, "POD_NAME": f"headway-{shard}"})


def _app(name: str, url: str, destination: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": API, "kind": "Application",
        "metadata": {"name": name, "namespace": "argocd"},
        "spec": {"project": "default",
                 "source": {"repoURL": url, "path": name, "targetRevision": "main"},
                 "destination": {**destination, "namespace": "default"},
                 "syncPolicy": {"automated": {}}},
    }


def _cluster_secret(server: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "cluster-second", "namespace": "argocd",
                         "labels": {"argocd.argoproj.io/secret-type": "cluster"}},
            "stringData": {"name": "second", "server": server, "config": "{}", "shard": "1"}}


def _has_config_map(db: Path, name: str) -> bool:
    with LocalCluster(db, SystemClock()) as store:
        try:
            store.get("v1", "ConfigMap", name, "default")
        except NotFound:
            return False
        return True


def _status(db: Path, name: str) -> dict[str, Any]:
    with LocalCluster(db, SystemClock()) as store:
        return dict(store.get(API, "Application", name, "argocd").get("status") or {})


def _lease_holder(config: Path, shard: int) -> str:
    url = next(line.split()[-1] for line in config.read_text().splitlines() if "server:" in line)
    answer = httpx2.get(f"{url}/apis/coordination.k8s.io/v1/namespaces/argocd/leases/"
                        f"headway-controller-{shard}")
    return str(answer.json().get("spec", {}).get("holderIdentity", "")) if answer.is_success \
        else ""


def test_each_shard_syncs_only_the_apps_of_its_clusters(
    tmp_path: Path, api: tuple[Path, Path], second_api: tuple[str, Path]
) -> None:
    config, first_db = api
    second_url, second_db = second_api
    remote = Remote(tmp_path / "remote.git")
    remote.commit({f"{n}/cm.yaml": dump({"apiVersion": "v1", "kind": "ConfigMap",
                                         "metadata": {"name": n}, "data": {"from": n}})
                   for n in ("to-second", "to-first")})
    (tmp_path / "second.kubeconfig").write_text(kubeconfig_text(second_url))
    with LocalCluster(first_db, SystemClock()) as store:
        store.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "argocd"}},
                    field_manager="admin")
        for obj in (default_project(), _cluster_secret(second_url),
                    _app("to-second", remote.url, {"name": "second"}),
                    _app("to-first", remote.url, {"name": "in-cluster"})):
            store.apply(obj, field_manager="admin")
    logs = {shard: tmp_path / f"shard-{shard}.log" for shard in (0, 1)}
    replicas: list[subprocess.Popen[bytes]] = []
    try:
        replicas.append(_serve(config, tmp_path / "s1", logs[1], 1))
        wait_for(lambda: _has_config_map(second_db, "to-second"), timeout=90,
                 what="shard 1 syncing to-second into the second cluster")
        wait_for(lambda: (_status(first_db, "to-second").get("sync") or {}).get("status")
                 == "Synced", timeout=60, what="to-second Synced")
        # Shard 1 stepped every key at its start; to-first (in-cluster: shard 0) got nothing.
        assert _status(first_db, "to-first") == {}
        assert not _has_config_map(first_db, "to-first")
        assert "shard 1 of 2" in logs[1].read_text()

        replicas.append(_serve(config, tmp_path / "s0", logs[0], 0))
        wait_for(lambda: _has_config_map(first_db, "to-first"), timeout=90,
                 what="shard 0 syncing to-first into its own cluster")
        assert not _has_config_map(second_db, "to-first")
        assert not _has_config_map(first_db, "to-second")
        assert (_lease_holder(config, 0), _lease_holder(config, 1)) == ("headway-0", "headway-1")
    finally:
        for process in replicas:
            stop_gently(process)
