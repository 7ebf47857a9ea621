"""A MultiClusterRollout that aborts because a later group failed reverts the release in Git,
once: three stores stand in for three clusters (as in test_multicluster_rollout.py) and the
Applications read a real Git repository on disk."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pygit2
import pytest
from test_multicluster_rollout import ARGO, CANARY, FAILED, HEALTHY, REVISION, World, _application

from headway.clock import VirtualClock
from headway.controllers.multicluster.controller import API, KIND, MultiClusterRolloutController
from headway.source.git import GitCache

MANIFEST = """\
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {{name: web, namespace: shop}}
spec:
  replicas: 1
  template:
    spec:
      containers:
        - name: web
          image: {image}
"""


class Repo:
    def __init__(self, path: Path) -> None:
        self.repo = pygit2.init_repository(str(path), bare=True, initial_head="main")
        self.url = path.as_uri()

    def commit(self, image: str, message: str) -> str:
        ref = "refs/heads/main"
        parents = [self.repo.references[ref].target] if ref in self.repo.references else []
        blob = self.repo.create_blob(MANIFEST.format(image=image).encode())
        index = pygit2.Index()
        index.add(pygit2.IndexEntry("shop/rollout.yaml", blob, pygit2.GIT_FILEMODE_BLOB))
        sig = pygit2.Signature("Dev", "dev@example.com")
        tree = index.write_tree(self.repo)
        return str(self.repo.create_commit(ref, sig, sig, message, tree, parents))

    def log(self) -> list[pygit2.Commit]:
        return list(self.repo.walk(self.repo.references["refs/heads/main"].target))

    def image(self) -> str:
        blob = self.repo[self.log()[0].tree["shop/rollout.yaml"].id]
        assert isinstance(blob, pygit2.Blob)
        return blob.data.decode().rsplit("image: ", 1)[1].strip()


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    repo = Repo(tmp_path / "gitops")
    repo.commit("web:1", "web 1")
    repo.commit("web:2", "release web 2")
    return repo


@pytest.fixture
def world(tmp_path: Path, clock: VirtualClock, repo: Repo) -> World:
    world = World(tmp_path, clock, git=GitCache(tmp_path / "git-cache"))
    for name, cluster in world.remotes.items():
        app = _application(name)
        app["spec"]["source"]["repoURL"] = repo.url
        world.store.apply(app, field_manager="test")
        rollout = cluster.get(ARGO, "Rollout", "web", "shop")
        cluster.apply(_stable_replica_set(rollout), field_manager="test")
        world.app_status(name, sync="OutOfSync")
    return world


def _stable_replica_set(rollout: dict[str, Any]) -> dict[str, Any]:
    owner = {"apiVersion": ARGO, "kind": "Rollout", "name": "web",
             "uid": rollout["metadata"]["uid"], "controller": True}
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": "web-old", "namespace": "shop", "ownerReferences": [owner],
                         "labels": {"rollouts-pod-template-hash": "old"}},
            "spec": {"replicas": 1, "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "web:1"}]}}}}


def _fail_in_group_one(world: World) -> None:
    world.app_status("canary", sync="Synced")
    world.rollout_status("canary", **HEALTHY)
    world.step()
    assert world.requested() == {"eu", "us"}
    world.app_status("eu", sync="Synced", health="Degraded")
    world.rollout_status("eu", **FAILED)
    world.app_status("us", sync="Synced", health="Progressing")
    world.rollout_status("us", **CANARY)


def _reverts(repo: Repo) -> list[pygit2.Commit]:
    return [c for c in repo.log() if "Headway-Revert-Of:" in c.message]


def test_a_failure_in_a_later_group_reverts_the_release_in_git_once(
    world: World, repo: Repo
) -> None:
    release = repo.log()[0].id
    assert repo.image() == "web:2"
    _fail_in_group_one(world)
    world.step()
    assert [world.rollout(n).get("abort") for n in ("canary", "eu", "us")] == [True] * 3
    reverts = _reverts(repo)
    assert len(reverts) == 1 and repo.log()[0].id == reverts[0].id
    assert f"Headway-Revert-Of: {release}" in reverts[0].message
    assert repo.image() == "web:1"  # the canary cluster, Done on web:2, syncs back from here
    status = world.status()
    assert status["revertedRevision"] == REVISION and status["revert"]["result"] == "Reverted"
    assert status["revert"]["commits"] == [str(reverts[0].id)]
    world.step()
    assert len(repo.log()) == 3


def test_a_restart_between_the_commit_and_the_status_never_commits_twice(
    world: World, repo: Repo, tmp_path: Path, clock: VirtualClock
) -> None:
    _fail_in_group_one(world)
    world.step()
    assert len(_reverts(repo)) == 1
    status = world.status()  # killed after the commit, before the status said so:
    lost = {k: v for k, v in status.items() if k not in ("revertedRevision", "revert")}
    world.store.patch_status(API, KIND, "shop", "argocd", lost)
    assert "revertedRevision" not in world.status()
    world.controller = MultiClusterRolloutController(
        world.store, clusters=world.registry, clock=clock,
        git=GitCache(tmp_path / "git-cache-after-restart"))
    world.step()
    assert len(_reverts(repo)) == 1 and len(repo.log()) == 3
    assert world.status()["revert"]["result"] == "AlreadyReverted"


def test_without_git_to_write_to_the_abort_commits_nothing(
    world: World, repo: Repo, tmp_path: Path, clock: VirtualClock
) -> None:
    world.controller = MultiClusterRolloutController(world.store, clusters=world.registry,
                                                     clock=clock)
    _fail_in_group_one(world)
    world.step()
    assert world.status()["phase"] == "Aborted" and "revert" not in world.status()
    assert len(repo.log()) == 2
