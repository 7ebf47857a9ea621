"""The Application whose image change a revert undoes is found by the Rollout's tracking
marks, under Argo CD's instance name: a same-named Application in another namespace (a team
can create one) never passes for it."""

from __future__ import annotations

from pathlib import Path

from convergence_harness import application

from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
from headway.controllers.convergence.controller import find_application


def _rollout(instance: str) -> dict[str, object]:
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Rollout",
        "metadata": {
            "name": "web",
            "namespace": "shop",
            "labels": {"app.kubernetes.io/instance": instance},
            "annotations": {
                "argocd.argoproj.io/tracking-id": f"{instance}:argoproj.io/Rollout:shop/web"
            },
        },
    }


def test_the_instance_name_tells_same_named_applications_apart(
    tmp_path: Path, clock: VirtualClock
) -> None:
    cluster = LocalCluster(tmp_path / "cluster.db", clock)
    for namespace in ("argocd", "team-a"):
        cluster.apply(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
            field_manager="test",
        )
        app = application("https://git.example.com/org/repo.git")
        app["metadata"]["namespace"] = namespace
        cluster.apply(app, field_manager="test")
    found = find_application(cluster, _rollout("web"))
    assert found is not None and found["metadata"]["namespace"] == "argocd"
    found = find_application(cluster, _rollout("team-a_web"))
    assert found is not None and found["metadata"]["namespace"] == "team-a"
    assert find_application(cluster, _rollout("team-b_web")) is None
