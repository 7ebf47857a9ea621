"""The dashboard over the Kubernetes backend: the same pages and the same live stream when
its `Cluster` is a Kubernetes API client (here the local runtime's API server, a real HTTP
server over a store file), not the store itself."""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from dashboard_env import API, application, application_status, serving

from headway.cli.runtime import kubeconfig_text
from headway.clock import SystemClock
from headway.cluster.kube.cluster import KubeCluster
from headway.cluster.local import LocalCluster
from headway.cluster.local.api.kubeapi.server import ApiServer


@pytest.fixture
def store_and_api(tmp_path: Path) -> Iterator[tuple[LocalCluster, KubeCluster]]:
    db = tmp_path / "served" / "cluster.db"
    db.parent.mkdir()
    server = ApiServer(db_path=db, clock=SystemClock())
    server.start()
    config = tmp_path / "kubeconfig"
    config.write_text(kubeconfig_text(f"http://{server.address}"))
    try:
        with LocalCluster(db, SystemClock()) as store, KubeCluster.connect(config) as kube:
            yield store, kube
    finally:
        server.stop()


def test_pages_and_live_updates_through_the_kubernetes_api(
    tmp_path: Path, store_and_api: tuple[LocalCluster, KubeCluster]
) -> None:
    store, kube = store_and_api
    store.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "argocd"}},
                field_manager="test")
    store.apply(application(), field_manager="test")
    store.patch_status(API, "Application", "guestbook", "argocd", application_status())
    with serving(kube, tmp_path / "state") as served:
        listed = httpx2.get(served.url + "/applications", timeout=30).text
        assert 'data-app="argocd/guestbook"' in listed and "OutOfSync" in listed
        page = httpx2.get(served.url + "/applications/argocd/guestbook", timeout=30).text
        assert "waiting for Deployment/web to be Healthy" in page

        got: queue.Queue[list[str]] = queue.Queue()
        opened = threading.Event()

        def follow() -> None:
            with httpx2.stream("GET", served.url + "/events", timeout=60) as stream:
                for line in stream.iter_lines():
                    if line.startswith(": connected"):
                        opened.set()
                    elif line.startswith("data: "):
                        got.put(json.loads(line[len("data: "):]))
                        return

        threading.Thread(target=follow, daemon=True).start()
        assert opened.wait(30)
        status = {**application_status(), "sync": {"status": "Synced", "revision": "c" * 40}}
        store.patch_status(API, "Application", "guestbook", "argocd", status)
        assert "app/argocd/guestbook" in got.get(timeout=30)
