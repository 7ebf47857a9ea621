"""An Application whose destination is a Kubernetes API that refuses: a 403 on a list makes
its live state unknown (a ComparisonError, sync status Unknown, nothing written), never
"missing"; a 422 from admission fails the sync with the server's message naming the object
and the field. The destination is the local runtime's API with the refusal injected."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from app_harness import Harness, application, deployment, make_harness, manifests

from cluster.kube.faults import FaultyApi
from headway.clock import SystemClock, VirtualClock
from headway.cluster.kube import KubeCluster
from headway.cluster.local.api.kubeapi.server import ApiServer
from headway.controllers.app.controller import ApplicationController
from headway.controllers.cluster_registry import ClusterRegistry

DESTINATION = "https://kube.example:6443"


@pytest.fixture
def faulty(tmp_path: Path) -> Iterator[FaultyApi]:
    """The local runtime's API over a store of its own, refusals injected in front."""
    (tmp_path / "destination").mkdir()
    server = ApiServer(db_path=tmp_path / "destination" / "cluster.db", clock=SystemClock())
    server.start()
    faults = FaultyApi(f"http://{server.address}")
    try:
        yield faults
    finally:
        faults.close()
        server.stop()


def _harness(
    tmp_path: Path, clock: VirtualClock, faulty: FaultyApi
) -> tuple[Harness, KubeCluster]:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(deployment("web"))})
    remote = faulty.cluster()
    remote.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "demo"}},
                 field_manager="test")
    clusters = ClusterRegistry(h.store, clock=clock)
    clusters.register(name="prod", server=DESTINATION, cluster=remote)
    h.controller = ApplicationController(store=h.store, clusters=clusters, sources=h.reader,
                                         clock=clock)
    app: dict[str, Any] = application("web", h.remote.url, path="app", automated={})
    app["spec"]["destination"] = {"name": "prod", "namespace": "demo"}
    h.install(app)
    return h, remote


def test_a_forbidden_list_is_a_comparison_error_and_nothing_is_synced(
    tmp_path: Path, clock: VirtualClock, faulty: FaultyApi
) -> None:
    faulty.inject("fault-403-list-configmaps.json")
    h, remote = _harness(tmp_path, clock, faulty)
    for _ in range(3):
        h.step("web")
    status = h.status("web")
    assert status["sync"]["status"] == "Unknown"
    (condition,) = status["conditions"]
    assert condition["type"] == "ComparisonError"
    assert condition["message"].startswith("cannot list ConfigMap (v1): ConfigMap: configmaps "
                                           "is forbidden: User ")
    assert 'cannot list resource "configmaps"' in condition["message"]
    assert "operationState" not in status
    assert remote.list("apps/v1", "Deployment", namespace="demo") == []


def test_an_admission_rejection_fails_the_sync_with_the_servers_message(
    tmp_path: Path, clock: VirtualClock, faulty: FaultyApi
) -> None:
    faulty.inject("fault-422-deployment.json")
    h, remote = _harness(tmp_path, clock, faulty)
    status = h.run("web", lambda s: (s.get("operationState") or {}).get("phase") == "Failed")
    message = status["operationState"]["message"]
    assert 'Deployment.apps "web" is invalid: spec.template.spec.containers[0].resources.' \
        "limits: Required value" in message
    assert remote.list("apps/v1", "Deployment", namespace="demo") == []
