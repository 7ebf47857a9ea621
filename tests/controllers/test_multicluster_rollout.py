"""The MultiClusterRollout controller over three stores standing in for three clusters: the
control store (where Applications live) and two destinations registered by cluster Secrets.
The Application and Rollout controllers are not run: each test writes the statuses they would
write, and checks what the controller requests (sync operations) and aborts (Rollouts)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from headway.clock import VirtualClock
from headway.cluster.cluster_secrets import ClusterSecret
from headway.cluster.local import LocalCluster
from headway.cluster.protocol import Cluster
from headway.controllers.cluster_registry import ClusterRegistry
from headway.controllers.manager import ObjectKey
from headway.controllers.multicluster.controller import API, KIND, MultiClusterRolloutController
from headway.source.git import GitCache

ARGO = "argoproj.io/v1alpha1"
REVISION = "c0ffee"


class World:
    def __init__(
        self, tmp_path: Path, clock: VirtualClock, *, git: GitCache | None = None
    ) -> None:
        self.store = LocalCluster(tmp_path / "control.db", clock)
        self.remotes = {name: LocalCluster(tmp_path / f"{name}.db", clock)
                        for name in ("canary", "eu", "us")}
        for cluster in (self.store, *self.remotes.values()):
            for ns in ("argocd", "shop"):
                cluster.apply({"apiVersion": "v1", "kind": "Namespace",
                               "metadata": {"name": ns}}, field_manager="test")
        for name in self.remotes:
            self.store.apply(_cluster_secret(name), field_manager="test")
        servers = {f"https://{name}.example": c for name, c in self.remotes.items()}

        def connect(secret: ClusterSecret) -> Cluster:
            return servers[secret.server]

        registry = ClusterRegistry(self.store, connect=connect, clock=clock,
                                   namespace="argocd")
        self.registry = registry
        self.controller = MultiClusterRolloutController(self.store, clusters=registry,
                                                        clock=clock, git=git)
        self.store.apply({
            "apiVersion": API, "kind": KIND, "metadata": {"name": "shop", "namespace": "argocd"},
            "spec": {"canary": {"application": "shop-canary"},
                     "groups": [{"applications": ["shop-eu", "shop-us"]}]},
        }, field_manager="test")
        for name in self.remotes:
            self.store.apply(_application(name), field_manager="test")
            self.remotes[name].apply(_rollout(), field_manager="test")

    def step(self) -> float | None:
        return self.controller.step(ObjectKey("argocd", "shop"))

    def status(self) -> dict[str, Any]:
        return dict(self.store.get(API, KIND, "shop", "argocd").get("status") or {})

    def requested(self) -> set[str]:
        apps = self.store.list(ARGO, "Application", namespace="argocd")
        return {a["metadata"]["name"].removeprefix("shop-") for a in apps if a.get("operation")}

    def app_status(
        self, name: str, *, sync: str, health: str = "Healthy", revision: str = REVISION
    ) -> None:
        """What the Application controller writes after a sync (the request consumed)."""
        app = self.store.get(ARGO, "Application", f"shop-{name}", "argocd")
        app.pop("operation", None)
        app = self.store.update({k: v for k, v in app.items() if k != "status"},
                                field_manager="test")
        status = {"sync": {"status": sync, "revision": revision},
                  "health": {"status": health},
                  "resources": [{"group": "argoproj.io", "kind": "Rollout",
                                 "namespace": "shop", "name": "web"}]}
        self.store.patch_status(ARGO, "Application", f"shop-{name}", "argocd", status)

    def rollout_status(self, name: str, **status: Any) -> None:
        self.remotes[name].patch_status(ARGO, "Rollout", "web", "shop",
                                        {"observedGeneration": "1", **status})

    def rollout(self, name: str) -> dict[str, Any]:
        return dict(self.remotes[name].get(ARGO, "Rollout", "web", "shop").get("status") or {})


HEALTHY = {"phase": "Healthy", "currentPodHash": "new", "stableRS": "new"}
CANARY = {"phase": "Paused", "currentPodHash": "new", "stableRS": "old"}
FAILED = {"phase": "Degraded", "currentPodHash": "new", "stableRS": "old",
          "message": "RolloutAborted: metric error-rate assessed Failed"}


def _cluster_secret(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": f"cluster-{name}", "namespace": "argocd",
                         "labels": {"argocd.argoproj.io/secret-type": "cluster"}},
            "stringData": {"name": name, "server": f"https://{name}.example",
                           "config": json.dumps({"bearerToken": "t"})}}


def _application(name: str) -> dict[str, Any]:
    return {"apiVersion": ARGO, "kind": "Application",
            "metadata": {"name": f"shop-{name}", "namespace": "argocd"},
            "spec": {"project": "default", "destination": {"name": name, "namespace": "shop"},
                     "source": {"repoURL": "https://git.example/shop", "path": "shop"}}}


def _rollout() -> dict[str, Any]:
    return {"apiVersion": ARGO, "kind": "Rollout", "metadata": {"name": "web", "namespace": "shop"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "web", "image": "web:2"}]}}}}


@pytest.fixture
def world(tmp_path: Path, clock: VirtualClock) -> World:
    world = World(tmp_path, clock)
    for name in world.remotes:  # a new release: every Application OutOfSync
        world.app_status(name, sync="OutOfSync")
    return world


def test_a_good_release_walks_the_canary_cluster_then_the_rest(world: World) -> None:
    for cluster in world.remotes.values():  # the first release: no Rollout exists yet
        cluster.delete(ARGO, "Rollout", "web", "shop")
    world.step()
    assert world.requested() == {"canary"}
    for cluster in world.remotes.values():
        cluster.apply(_rollout(), field_manager="test")
    world.step()
    assert world.requested() == {"canary"}
    world.app_status("canary", sync="Synced", health="Progressing")
    world.rollout_status("canary", **CANARY)
    world.step()
    assert world.requested() == set() and world.status()["group"] == 0
    world.rollout_status("canary", **HEALTHY)
    world.step()
    assert world.requested() == set()  # the Application's health has not caught up yet
    world.app_status("canary", sync="Synced")
    world.step()
    assert world.requested() == {"eu", "us"}
    for name in ("eu", "us"):
        world.app_status(name, sync="Synced")
        world.rollout_status(name, **HEALTHY)
    assert world.step() is None
    assert world.status()["phase"] == "Completed"


def test_a_bad_release_aborts_in_the_canary_cluster_and_reaches_no_other(world: World) -> None:
    world.step()
    world.app_status("canary", sync="Synced", health="Degraded")
    world.rollout_status("canary", **FAILED)
    world.step()
    assert world.rollout("canary")["abort"] is True
    assert world.status()["phase"] == "Aborted" and world.requested() == set()
    world.rollout_status("canary", abort=True, **HEALTHY)  # back on the stable, say
    world.step()
    assert world.requested() == set()  # the aborted revision never moves on
    assert "abort" not in world.rollout("eu") and "abort" not in world.rollout("us")


def test_a_failure_in_a_later_group_aborts_every_cluster_already_updated(world: World) -> None:
    world.app_status("canary", sync="Synced")
    world.rollout_status("canary", **HEALTHY)
    world.step()
    assert world.requested() == {"eu", "us"}
    world.app_status("eu", sync="Synced", health="Degraded")
    world.rollout_status("eu", **FAILED)
    world.app_status("us", sync="Synced", health="Progressing")
    world.rollout_status("us", **CANARY)
    world.step()
    assert [world.rollout(n).get("abort") for n in ("canary", "eu", "us")] == [True] * 3
    status = world.status()
    assert status["phase"] == "Aborted" and status["abortedRevision"] == REVISION
    assert "group 1 failed (shop-eu: Rollout shop/web: RolloutAborted" in status["message"]


def test_the_abort_keeps_naming_the_cluster_that_failed(world: World) -> None:
    """The canary cluster's Rollout, aborted by the walk itself, reads as failed on the next
    step: the status still names group 1 and eu (before: "the canary cluster failed")."""
    test_a_failure_in_a_later_group_aborts_every_cluster_already_updated(world)
    world.rollout_status("canary", **HEALTHY, abort=True)
    world.step()
    status = world.status()
    assert status["phase"] == "Aborted" and status["group"] == 1
    assert status["message"].startswith("group 1 failed (shop-eu: "), status["message"]


def test_a_revert_landing_while_the_abort_lasts_is_walked_as_a_new_revision(
    world: World,
) -> None:
    """Git convergence reverts the canary cluster's aborted Rollout while eu still shows the
    failure: the abort stays the failed release's, so the revert walks once the failure
    clears (before, the revert was taken for the aborted revision and never walked)."""
    test_a_failure_in_a_later_group_aborts_every_cluster_already_updated(world)
    world.app_status("canary", sync="OutOfSync", health="Degraded", revision="4e7e47")
    world.step()  # eu still failed on the release
    assert world.status()["phase"] == "Aborted"
    assert world.status()["abortedRevision"] == REVISION
    for name in ("eu", "us"):
        world.app_status(name, sync="OutOfSync", health="Degraded", revision="4e7e47")
    world.step()
    status = world.status()
    assert status["phase"] == "Progressing" and status["revision"] == "4e7e47", status
    assert world.requested() == {"canary"}  # from the canary cluster again


def test_the_step_after_the_aborts_land_still_names_the_group_that_failed(
    world: World,
) -> None:
    """Even with no status kept from the first abort (its write lost to a Conflict, say), the
    canary cluster's Rollout, aborted by the walk after it was Done on the release, is not
    blamed: the verdict is group 1 from the evidence itself (before: "the canary cluster
    failed (shop-canary: Rollout shop/web: RolloutAborted ...", group 0)."""
    world.app_status("canary", sync="Synced")
    world.rollout_status("canary", **HEALTHY)
    world.step()
    world.app_status("eu", sync="Synced", health="Degraded")
    world.rollout_status("eu", **FAILED)
    world.app_status("us", sync="Synced", health="Progressing")
    world.rollout_status("us", **CANARY)
    world.step()
    # what the canary cluster's Rollout controller makes of the abort: Degraded, still stable
    world.rollout_status("canary", abort=True, **{**FAILED, "stableRS": "new"})
    world.app_status("canary", sync="Synced", health="Degraded")
    world.store.patch_status(API, KIND, "shop", "argocd", {"phase": "Progressing", "group": 1})
    world.step()
    status = world.status()
    assert status["phase"] == "Aborted" and status["group"] == 1
    assert status["message"].startswith("group 1 failed (shop-eu: Rollout shop/web: RolloutAb")
    assert "shop-canary" not in status["message"]
    assert status["clusters"][0]["reason"].endswith("(aborted after the release was Done here)")


def test_a_done_rollout_aborted_by_hand_still_stops_the_walk(world: World) -> None:
    world.app_status("canary", sync="Synced")
    world.rollout_status("canary", abort=True, **HEALTHY)  # an operator's abort, say
    world.step()
    status = world.status()
    assert status["phase"] == "Aborted" and status["group"] == 0
    assert world.requested() == set()


def test_an_application_with_automated_sync_is_refused_by_name(world: World) -> None:
    app = world.store.get(ARGO, "Application", "shop-eu", "argocd")
    app["spec"]["syncPolicy"] = {"automated": {}}
    world.store.update({k: v for k, v in app.items() if k != "status"}, field_manager="test")
    world.step()
    assert world.status()["phase"] == "InvalidSpec"
    assert "shop-eu has syncPolicy.automated on" in world.status()["message"]
    assert world.requested() == set()


def test_a_malformed_spec_is_a_status_naming_the_field(world: World) -> None:
    owner = world.store.get(API, KIND, "shop", "argocd")
    owner["spec"]["groups"] = [{"applications": "shop-eu"}]
    world.store.update({k: v for k, v in owner.items() if k != "status"}, field_manager="test")
    assert world.step() is None
    assert world.status() == {"phase": "InvalidSpec",
                              "message": "spec.groups[0].applications: a non-empty list of names"}


def test_a_rollout_that_has_not_seen_its_new_spec_is_not_done(world: World) -> None:
    world.app_status("canary", sync="Synced")
    world.rollout_status("canary", **HEALTHY)
    rollout = world.remotes["canary"].get(ARGO, "Rollout", "web", "shop")
    rollout["spec"]["template"]["spec"]["containers"][0]["image"] = "web:3"  # generation 2
    world.remotes["canary"].update({k: v for k, v in rollout.items() if k != "status"},
                                   field_manager="test")
    world.step()
    assert world.requested() == set()
    assert world.status()["clusters"][0] == {"application": "shop-canary", "stage": "Rolling",
                                             "reason": "Rollout shop/web in progress"}


def test_an_abort_left_from_the_old_spec_does_not_fail_the_new_release(world: World) -> None:
    world.app_status("canary", sync="Synced")
    world.rollout_status("canary", abort=True, **FAILED)  # the last release's abort
    rollout = world.remotes["canary"].get(ARGO, "Rollout", "web", "shop")
    rollout["spec"]["template"]["spec"]["containers"][0]["image"] = "web:1"  # the revert
    world.remotes["canary"].update({k: v for k, v in rollout.items() if k != "status"},
                                   field_manager="test")
    world.app_status("eu", sync="Synced")
    world.rollout_status("eu", **HEALTHY)
    world.step()
    assert world.status()["phase"] == "Progressing"
    assert "abort" not in world.rollout("eu")  # a Done cluster is not aborted for it
