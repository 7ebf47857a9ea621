"""One release across two local runtimes standing in for two clusters (`headway runtime up`
twice, each with its own store and API, each with its own `headway serve`, as Argo Rollouts
runs in every cluster). The first runtime is the hub and the canary cluster (in-cluster); the
second is registered by `headway cluster add` as `eu`. A `MultiClusterRollout` orders them:
canary cluster, then eu. Each runtime's image config decides which tags crash (a release that
breaks against one region's dependencies, say), so a Rollout's progress deadline aborts it.

1. a good release walks canary cluster -> eu: eu never runs it before the canary is Done;
2. a release bad in the canary cluster aborts there and never reaches eu; Git convergence
   commits the revert, which walks both clusters back to the good image;
3. a release bad only in eu aborts there and the MultiClusterRollout aborts the canary
   cluster's Rollout too, reverts the release in Git once, and both clusters walk back."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
import yaml

from e2e_rollouts.manifests import container
from e2e_rollouts.stage import APP, IMAGE
from e2e_sync.e2e_helpers import API, Remote, default_project, dump, stop_gently
from headway.cluster.errors import NotFound
from headway.cluster.kube import KubeCluster
from headway.cluster.kube.transport import Transport
from headway.state_dir import RuntimePaths, read_runtime_info
from polling import wait_for

pytestmark = pytest.mark.slow

HEADWAY = "headway.dev/v1alpha1"


def headway(*args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "headway", *args], capture_output=True,
                          text=True, timeout=90, check=False)
    assert done.returncode == 0, f"headway {' '.join(args)}: {done.stdout}{done.stderr}"
    return done.stdout


def _image_config(state: Path, crashing_tags: str) -> None:
    """Every tag of IMAGE runs examples/app; the tags in `crashing_tags` exit at once."""
    wrapper = (f'case " $CRASHING " in *" $HEADWAY_IMAGE_TAG "*) exit 3;; esac; '
               f'exec "{sys.executable}" "{APP}"')
    (state / "headway-runtime.yaml").write_text(
        f"images:\n  {IMAGE}:\n    command: [/bin/sh, -c, {wrapper!r}]\n"
        f"    env: {{CRASHING: {crashing_tags!r}}}\n    versionFromTag: true\n")


def _api(state: Path) -> KubeCluster:
    address = str(read_runtime_info(RuntimePaths(state)).get("apiAddress"))
    base = address if address.startswith("http") else f"http://{address}"
    return KubeCluster(Transport(httpx2.Client(base_url=base, timeout=30.0)), streams=False)


class Clusters:
    def __init__(self, hub: Path, eu: Path) -> None:
        self.hub_dir, self.eu_dir = hub, eu
        self.hub, self.eu = _api(hub), _api(eu)

    def image(self, cluster: KubeCluster) -> str | None:
        try:
            rollout = cluster.get(API, "Rollout", "web", "default")
        except NotFound:
            return None
        return str(rollout["spec"]["template"]["spec"]["containers"][0]["image"])

    def healthy_on(self, cluster: KubeCluster, version: str) -> bool:
        if self.image(cluster) != f"{IMAGE}:{version}":
            return False
        status = cluster.get(API, "Rollout", "web", "default").get("status") or {}
        return status.get("phase") == "Healthy" and status.get("stableRS") == status.get(
            "currentPodHash")

    def aborted(self, cluster: KubeCluster) -> bool:
        return bool((cluster.get(API, "Rollout", "web", "default").get("status") or {})
                    .get("abort"))

    def story(self) -> str:
        """What a failed wait shows: the walk, the Applications, both serves' log tails."""
        apps = self.hub.list(API, "Application", namespace="argocd")
        told = [yaml.safe_dump({"walk": self.walk()})]
        for app in apps:
            status = app.get("status") or {}
            told.append(f"{app['metadata']['name']}: sync {status.get('sync')} health "
                        f"{status.get('health')} op {status.get('operationState', {}).get('phase')}"
                        f" {status.get('conditions')}")
        for name, cluster in (("hub", self.hub), ("eu", self.eu)):
            try:
                status = cluster.get(API, "Rollout", "web", "default").get("status") or {}
            except NotFound:
                status = {}
            told.append(f"{name} Rollout: {status.get('phase')} {status.get('message')} "
                        f"abort={status.get('abort')} {status.get('conditions')}")
        for state in (self.hub_dir, self.eu_dir):
            told.append((state / "serve.log").read_text()[-3000:])
        return "\n".join(told)

    def aborted_events(self) -> dict[str, int]:
        """Each MultiClusterRolloutAborted Event's name and count: an abort recorded later is
        a new name or a higher count."""
        events = self.hub.list("v1", "Event", namespace="argocd")
        return {str(e["metadata"]["name"]): int(e.get("count") or 1) for e in events
                if e.get("reason") == "MultiClusterRolloutAborted"}

    def aborted_story(self, since: dict[str, int]) -> str:
        """The messages of the Aborted Events recorded after `since` (`aborted_events()`):
        an earlier release's abort is not this one's."""
        events = self.hub.list("v1", "Event", namespace="argocd")
        return " | ".join(
            str(e.get("message")) for e in events
            if e.get("reason") == "MultiClusterRolloutAborted"
            and int(e.get("count") or 1) > since.get(str(e["metadata"]["name"]), 0))

    def walk(self) -> dict[str, Any]:
        owner = self.hub.get(HEADWAY, "MultiClusterRollout", "shop", "argocd")
        return dict(owner.get("status") or {})


class _AbortedWalks:
    """Every Aborted MultiClusterRollout status the test reads, to check what each blamed."""

    def __init__(self, clusters: Clusters) -> None:
        self.clusters = clusters
        self.seen: list[dict[str, Any]] = []

    def look(self) -> bool:
        """Whether the walk is Aborted now (and keep it when it is)."""
        walk = self.clusters.walk()
        if walk.get("phase") != "Aborted":
            return False
        self.seen.append(walk)
        return True


def _rollout(version: str) -> dict[str, Any]:
    return {
        "apiVersion": API, "kind": "Rollout",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": 1, "progressDeadlineSeconds": 10, "progressDeadlineAbort": True,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                         "spec": {"terminationGracePeriodSeconds": 1,
                                  "containers": [container(version)]}},
            "strategy": {"canary": {"steps": [{"setWeight": 50},
                                              {"pause": {"duration": "1s"}}]}},
        },
    }


def _application(name: str, url: str, destination: dict[str, str],
                 annotations: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": API, "kind": "Application",
        "metadata": {"name": name, "namespace": "argocd", "annotations": annotations or {}},
        "spec": {"project": "default",
                 "source": {"repoURL": url, "path": "app", "targetRevision": "main"},
                 "destination": {**destination, "namespace": "default"}},
    }


@pytest.fixture
def clusters(tmp_path: Path) -> Iterator[Clusters]:
    """Two runtimes, each with its own serve; eu registered on the hub. v2 crashes on the
    hub, v3 crashes in eu."""
    hub, eu = tmp_path / "hub", tmp_path / "eu"
    started: list[Path] = []
    serves: list[subprocess.Popen[bytes]] = []
    try:
        for state, crashing in ((hub, "v2"), (eu, "v3")):
            state.mkdir()
            _image_config(state, crashing)
            headway("runtime", "up", "--state-dir", str(state))
            started.append(state)
        kubeconfig = yaml.safe_load(headway("runtime", "kubeconfig", "--state-dir", str(eu)))
        (tmp_path / "eu.kubeconfig").write_text(yaml.safe_dump(kubeconfig))
        headway("cluster", "add", "headway-local", "--from-kubeconfig",
                str(tmp_path / "eu.kubeconfig"), "--name", "eu", "--state-dir", str(hub))
        for state in (hub, eu):
            log = (state / "serve.log").open("wb")
            serves.append(subprocess.Popen(
                [sys.executable, "-m", "headway", "serve", "--state-dir", str(state),
                 "--app-poll-seconds", "1"], stdout=log, stderr=subprocess.STDOUT,
                env=dict(os.environ)))
        yield Clusters(hub, eu)
    finally:
        for serve in serves:
            stop_gently(serve)
        for state in started:
            subprocess.run([sys.executable, "-m", "headway", "runtime", "down", "--state-dir",
                            str(state)], capture_output=True, timeout=90, check=False)


def _walk_one_release(clusters: Clusters, version: str) -> None:
    """Wait for Completed on `version`, checking on every look that eu never runs it before
    the canary cluster is Healthy on it (when eu did not run it already)."""
    before = clusters.image(clusters.eu)

    def look() -> bool:
        if before != f"{IMAGE}:{version}" == clusters.image(clusters.eu):
            assert clusters.healthy_on(clusters.hub, version), "eu got it before the canary"
        walk = clusters.walk()
        return walk.get("phase") == "Completed" and clusters.healthy_on(clusters.eu, version)
    try:
        wait_for(look, timeout=120, what=f"{version} Completed in both clusters")
    except AssertionError as error:
        raise AssertionError(f"{error}\n{clusters.story()}") from None


def test_one_release_walks_the_canary_cluster_then_eu_and_an_abort_stops_both(
    tmp_path: Path, clusters: Clusters
) -> None:
    remote = Remote(tmp_path / "remote.git")
    remote.commit({"app/rollout.yaml": dump(_rollout("v1"))}, "v1")
    order = {"apiVersion": HEADWAY, "kind": "MultiClusterRollout",
             "metadata": {"name": "shop", "namespace": "argocd"},
             "spec": {"canary": {"application": "shop-canary"},
                      "groups": [{"applications": ["shop-eu"]}]}}
    (tmp_path / "apps.yaml").write_text(dump(
        default_project(), order,
        _application("shop-canary", remote.url, {"server": "https://kubernetes.default.svc"},
                     {"headway.dev/revert-on-abort": "true"}),
        _application("shop-eu", remote.url, {"name": "eu"}),
    ))
    headway("apply", "-f", str(tmp_path / "apps.yaml"), "--state-dir", str(clusters.hub_dir))
    _walk_one_release(clusters, "v1")

    # 2. v2 crashes in the canary cluster: aborted there, eu never gets it, Git reverts it
    remote.commit({"app/rollout.yaml": dump(_rollout("v2"))}, "v2")
    def reverted_in_git() -> bool:
        assert clusters.image(clusters.eu) == f"{IMAGE}:v1", "eu got the bad release"
        head = remote.repo.references["refs/heads/main"].peel()
        return "Headway-Revert-Of" in head.message
    try:
        wait_for(reverted_in_git, timeout=120, what="v2 aborted and reverted in Git")
    except AssertionError as error:
        raise AssertionError(f"{error}\n{clusters.story()}") from None
    _walk_one_release(clusters, "v1")  # the revert Git convergence committed

    # 3. v3 crashes only in eu: the canary cluster had it Done; its Rollout is aborted too
    # (the walk may have recorded an Aborted Event for v2 already, when it read the canary
    # cluster Failed before the revert: only an abort recorded from here on is v3's)
    aborts_before = clusters.aborted_events()
    v3 = remote.commit({"app/rollout.yaml": dump(_rollout("v3"))}, "v3")
    aborted_walks = _AbortedWalks(clusters)
    try:
        wait_for(lambda: aborted_walks.look() or clusters.aborted_story(aborts_before),
                 timeout=120, what="v3 aborted in eu")
        # the walk aborts the canary cluster's Rollout in the step that reads eu Failed, or,
        # when that write met a conflict, in its next step
        wait_for(lambda: clusters.aborted(clusters.eu) and clusters.aborted(clusters.hub),
                 timeout=60, what="both clusters' Rollouts aborted")
    except AssertionError as error:
        raise AssertionError(f"{error}\n{clusters.story()}") from None

    # the MultiClusterRollout reverts v3 in Git once (Git convergence only reads the hub's
    # Rollouts, where v3 was Done); the canary cluster, Done on v3, walks back to v1 with eu
    def reverts_of_v3() -> int:
        tip = remote.repo.references["refs/heads/main"].target
        return sum(f"Headway-Revert-Of: {v3}" in c.message for c in remote.repo.walk(tip))
    try:
        wait_for(lambda: [aborted_walks.look(), reverts_of_v3() > 0][-1], timeout=120,
                 what="v3 reverted in Git")
        # until the revert's walk starts, every Aborted status read blames eu (group 1): the
        # canary cluster's Rollout, aborted Done on v3, is not read as a failure of its own
        wait_for(lambda: not aborted_walks.look(), timeout=120, what="the revert's walk")
    except AssertionError as error:
        raise AssertionError(f"{error}\n{clusters.story()}") from None
    blamed = {(w["group"], str(w["message"]).split(";")[0]) for w in aborted_walks.seen}
    assert all(group == 1 and message.startswith("group 1 failed (shop-eu")
               for group, message in blamed), blamed
    assert "group 1 failed (shop-eu" in clusters.aborted_story(aborts_before)
    _walk_one_release(clusters, "v1")
    assert reverts_of_v3() == 1
