"""Issue 15: the ApplicationSet controller on the local store with a real Git remote — apps
generated from git directories, owned by the set; a bad template edit or an unreadable
repository changes no Application; an emptied directory deletes nothing."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from e2e_sync.e2e_helpers import API, Remote, default_project
from headway.cli.main import _register_all, app
from headway.clock import VirtualClock
from headway.cluster.errors import NotFound
from headway.cluster.local import LocalCluster
from headway.controllers.appset.controller import ApplicationSetController
from headway.controllers.manager import ObjectKey
from headway.source.git import GitCache

KEY = ObjectKey("argocd", "addons")
CM = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"


def _appset(url: str, name_template: str = "{{.path.basename}}") -> dict[str, Any]:
    return {
        "apiVersion": API,
        "kind": "ApplicationSet",
        "metadata": {"name": "addons", "namespace": "argocd"},
        "spec": {
            "goTemplate": True,
            "goTemplateOptions": ["missingkey=error"],
            "generators": [
                {"git": {"repoURL": url, "revision": "main", "directories": [{"path": "addons/*"}]}}
            ],
            "template": {
                "metadata": {"name": name_template},
                "spec": {
                    "project": "default",
                    "source": {"repoURL": url, "targetRevision": "main", "path": "{{.path.path}}"},
                    "destination": {
                        "server": "https://kubernetes.default.svc",
                        "namespace": "{{.path.basename}}",
                    },
                },
            },
        },
    }


class World:
    def __init__(self, tmp_path: Path, store: LocalCluster) -> None:
        self.remote = Remote(tmp_path / "remote.git")
        self.remote.commit(
            {"addons/metrics/cm.yaml": CM, "addons/logging/cm.yaml": CM}, "two addons"
        )
        self.store = store
        self.clock = VirtualClock()
        git = GitCache(tmp_path / "git-cache")
        self.controller = ApplicationSetController(
            cluster=store, clock=self.clock, git=git, namespace="argocd", poll_seconds=0.001
        )
        store.apply(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "argocd"}},
            field_manager="t",
        )
        store.apply(default_project(), field_manager="t")

    def apply(self, appset: dict[str, Any]) -> None:
        self.store.apply(appset, field_manager="t", force=True)
        self.clock.advance(1)
        self.controller.step(KEY)

    def apps(self) -> dict[str, dict[str, Any]]:
        return {
            a["metadata"]["name"]: a
            for a in self.store.list(API, "Application", namespace="argocd")
        }

    def conditions(self) -> dict[str, dict[str, Any]]:
        status = self.store.get(API, "ApplicationSet", "addons", "argocd").get("status") or {}
        return {c["type"]: c for c in status.get("conditions") or []}


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    with LocalCluster(tmp_path / "cluster.db", VirtualClock()) as store:
        yield World(tmp_path, store)


def test_git_directories_generate_owned_applications(world: World) -> None:
    world.apply(_appset(world.remote.url))
    apps = world.apps()
    assert sorted(apps) == ["logging", "metrics"]
    owner = apps["metrics"]["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"], owner["controller"]) == ("ApplicationSet", "addons", True)
    assert apps["metrics"]["spec"]["source"]["path"] == "addons/metrics"
    assert world.conditions()["ResourcesUpToDate"]["status"] == "True"
    world.remote.commit({"addons/tracing/cm.yaml": CM}, "a third addon")
    world.clock.advance(5)
    world.controller.step(KEY)
    assert sorted(world.apps()) == ["logging", "metrics", "tracing"]


def test_a_bad_template_edit_changes_no_application(world: World) -> None:
    world.apply(_appset(world.remote.url))
    before = {n: a["metadata"]["resourceVersion"] for n, a in world.apps().items()}
    world.apply(_appset(world.remote.url, "{{.path.basenme}}"))  # a typo
    after = {n: a["metadata"]["resourceVersion"] for n, a in world.apps().items()}
    assert after == before
    conditions = world.conditions()
    assert conditions["ErrorOccurred"]["status"] == "True"
    assert conditions["ErrorOccurred"]["reason"] == "RenderTemplateParamsError"
    assert 'no entry for key "basenme"' in conditions["ErrorOccurred"]["message"]
    assert conditions["ParametersGenerated"]["status"] == "False"


def test_an_unreadable_repository_changes_no_application(world: World, tmp_path: Path) -> None:
    world.apply(_appset(world.remote.url))
    before = {n: a["metadata"]["resourceVersion"] for n, a in world.apps().items()}
    shutil.rmtree(tmp_path / "remote.git")
    world.clock.advance(5)
    world.controller.step(KEY)
    assert {n: a["metadata"]["resourceVersion"] for n, a in world.apps().items()} == before
    assert world.conditions()["ErrorOccurred"]["reason"] == "ApplicationGenerationFromParamsError"


def test_an_emptied_directory_listing_deletes_nothing(world: World) -> None:
    world.apply(_appset(world.remote.url))
    appset = _appset(world.remote.url)
    appset["spec"]["generators"][0]["git"]["directories"] = [{"path": "adons/*"}]  # a renamed path
    world.apply(appset)
    assert sorted(world.apps()) == ["logging", "metrics"]
    assert world.conditions()["ErrorOccurred"]["reason"] == "EmptyGenerationRefused"


def test_a_project_that_refuses_the_destination_keeps_the_application_out(world: World) -> None:
    project = default_project()
    project["spec"]["destinations"] = [{"server": "*", "namespace": "metrics"}]
    world.store.apply(project, field_manager="t", force=True)
    world.apply(_appset(world.remote.url))
    assert sorted(world.apps()) == ["metrics"]
    error = world.conditions()["ErrorOccurred"]
    assert error["reason"] == "ApplicationValidationError"
    assert "application logging" in error["message"]


def test_the_clusters_generator_reads_cluster_secrets_from_the_store(world: World) -> None:
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": "c-edge",
            "namespace": "argocd",
            "labels": {"argocd.argoproj.io/secret-type": "cluster", "tier": "edge"},
        },
        "stringData": {"name": "edge-1", "server": "https://edge-1:6443"},
    }
    world.store.apply(secret, field_manager="t")
    appset = _appset(world.remote.url, "guestbook-{{.name}}")
    appset["spec"]["generators"] = [{"clusters": {}}]
    appset["spec"]["template"]["spec"]["source"]["path"] = "addons/metrics"
    appset["spec"]["template"]["spec"]["destination"] = {"server": "{{.server}}", "namespace": "gb"}
    world.apply(appset)
    apps = world.apps()
    assert sorted(apps) == ["guestbook-edge-1", "guestbook-in-cluster"]
    assert apps["guestbook-edge-1"]["spec"]["destination"]["server"] == "https://edge-1:6443"


def test_headway_get_applicationsets_shows_apps_and_state(world: World, tmp_path: Path) -> None:
    _register_all()
    world.apply(_appset(world.remote.url))
    args = ["get", "applicationsets", "-n", "argocd", "--state-dir", str(tmp_path)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    header, row = result.output.splitlines()[:2]
    assert header.split()[:4] == ["NAME", "APPS", "STATUS", "MESSAGE"]
    assert row.split()[:3] == ["addons", "2", "Healthy"]
    world.apply(_appset(world.remote.url, "{{.nope}}"))
    result = CliRunner().invoke(
        app, ["get", "appsets", "-n", "argocd", "--state-dir", str(tmp_path)]
    )
    assert "Error" in result.output and 'no entry for key "nope"' in result.output


def test_an_application_another_controller_owns_is_left_alone(world: World) -> None:
    platform = {
        **_appset(world.remote.url),
        "metadata": {"name": "platform", "namespace": "argocd"},
    }
    uid = world.store.apply(platform, field_manager="t")["metadata"]["uid"]
    other = {
        "apiVersion": API,
        "kind": "Application",
        "metadata": {
            "name": "metrics",
            "namespace": "argocd",
            "ownerReferences": [
                {
                    "apiVersion": API,
                    "kind": "ApplicationSet",
                    "name": "platform",
                    "uid": uid,
                    "controller": True,
                }
            ],
        },
        "spec": {
            "project": "default",
            "source": {"repoURL": "https://elsewhere", "path": "x"},
            "destination": {"server": "https://kubernetes.default.svc", "namespace": "x"},
        },
    }
    world.store.apply(other, field_manager="t")
    world.apply(_appset(world.remote.url))
    apps = world.apps()
    assert apps["metrics"]["spec"]["source"]["repoURL"] == "https://elsewhere"
    assert "logging" in apps
    error = world.conditions()["ErrorOccurred"]
    assert error["reason"] == "ApplicationValidationError"
    assert "controlled by ApplicationSet/platform" in error["message"]


def test_a_deleted_set_with_reverse_deletion_order_removes_the_last_step_first(
    world: World,
) -> None:
    steps = [
        {"matchExpressions": [{"key": "env", "operator": "In", "values": ["qa"]}]},
        {"matchExpressions": [{"key": "env", "operator": "In", "values": ["live"]}]},
    ]
    appset = {
        "apiVersion": API,
        "kind": "ApplicationSet",
        "metadata": {"name": "addons", "namespace": "argocd"},
        "spec": {
            "goTemplate": True,
            "syncPolicy": {"preserveResourcesOnDeletion": True},
            "strategy": {
                "type": "RollingSync",
                "deletionOrder": "Reverse",
                "rollingSync": {"steps": steps},
            },
            "generators": [
                {
                    "list": {
                        "elements": [
                            {"env": "qa", "n": "1"},
                            {"env": "live", "n": "1"},
                            {"env": "live", "n": "2"},
                        ]
                    }
                }
            ],
            "template": {
                "metadata": {"name": "{{.env}}-{{.n}}", "labels": {"env": "{{.env}}"}},
                "spec": {
                    "project": "default",
                    "source": {"repoURL": world.remote.url, "path": "addons/metrics"},
                    "destination": {"server": "https://kubernetes.default.svc", "namespace": "x"},
                },
            },
        },
    }
    world.apply(appset)  # first step: the set takes the finalizer
    live = world.store.get(API, "ApplicationSet", "addons", "argocd")
    assert live["metadata"]["finalizers"] == ["resources-finalizer.argocd.argoproj.io"]
    world.controller.step(KEY)
    assert sorted(world.apps()) == ["live-1", "live-2", "qa-1"]
    world.store.delete(API, "ApplicationSet", "addons", "argocd")
    gone: list[tuple[str, ...]] = []
    for _ in range(4):
        before = set(world.apps())
        world.controller.step(KEY)
        gone.append(tuple(sorted(before - set(world.apps()))))
    assert gone == [("live-1",), ("live-2",), ("qa-1",), ()]  # one a step, the last step first
    with pytest.raises(NotFound):
        world.store.get(API, "ApplicationSet", "addons", "argocd")


def test_the_refresh_annotation_fetches_git_at_once_and_is_removed(tmp_path: Path) -> None:
    with LocalCluster(tmp_path / "cluster.db", VirtualClock()) as store:
        world = World(tmp_path, store)
        world.controller = ApplicationSetController(
            cluster=store,
            clock=world.clock,
            git=GitCache(tmp_path / "cache-2"),
            namespace="argocd",
            poll_seconds=3600,
        )
        world.apply(_appset(world.remote.url))
        world.remote.commit({"addons/tracing/cm.yaml": CM}, "a third addon")
        world.clock.advance(5)
        world.controller.step(KEY)
        assert sorted(world.apps()) == ["logging", "metrics"]  # not fetched: the poll is an hour
        refreshed = _appset(world.remote.url)
        refreshed["metadata"]["annotations"] = {
            "argocd.argoproj.io/application-set-refresh": "true"
        }
        world.apply(refreshed)
        assert sorted(world.apps()) == ["logging", "metrics", "tracing"]
        annotations = world.store.get(API, "ApplicationSet", "addons", "argocd")["metadata"].get(
            "annotations"
        )
        assert "argocd.argoproj.io/application-set-refresh" not in (annotations or {})


@pytest.mark.parametrize("policy", ["ignore", "create-only"])
def test_a_field_another_writer_owns_is_not_reverted(world: World, policy: str) -> None:
    """The seeds' ownership gotcha: a trusted preview deployer pins an image digest on a
    generated Application; the set must not revert it on its next step."""
    appset = _appset(world.remote.url)
    if policy == "ignore":
        appset["spec"]["ignoreApplicationDifferences"] = [
            {"jqPathExpressions": [".spec.source.kustomize.images"]}
        ]
    else:
        appset["spec"]["syncPolicy"] = {"applicationsSync": "create-only"}
    world.apply(appset)
    app = world.store.get(API, "Application", "metrics", "argocd")
    pinned = ["registry.example/metrics@sha256:" + "a" * 64]
    app["spec"]["source"]["kustomize"] = {"images": pinned}
    world.store.update(app, field_manager="preview-deployer")
    world.clock.advance(5)
    world.controller.step(KEY)
    assert world.apps()["metrics"]["spec"]["source"]["kustomize"] == {"images": pinned}
    assert world.conditions()["ResourcesUpToDate"]["status"] == "True"


def test_without_ignore_the_set_reverts_another_writers_field(world: World) -> None:
    world.apply(_appset(world.remote.url))
    app = world.store.get(API, "Application", "metrics", "argocd")
    app["spec"]["source"]["kustomize"] = {"images": ["registry.example/metrics@sha256:" + "a" * 64]}
    world.store.update(app, field_manager="preview-deployer")
    world.clock.advance(5)
    world.controller.step(KEY)
    assert "kustomize" not in world.apps()["metrics"]["spec"]["source"]
    warnings = [
        e["message"]
        for e in world.store.list("v1", "Event", namespace="argocd")
        if e.get("type") == "Warning" and e.get("reason") == "FieldTakenBack"
    ]
    assert warnings == [
        "Application metrics: spec.source.kustomize written by preview-deployer is set back to "
        "the generated value; list it in ignoreApplicationDifferences to keep it"
    ]


def test_headway_describe_applicationset_lines_up_its_conditions(
    world: World, tmp_path: Path
) -> None:
    _register_all()
    world.apply(_appset(world.remote.url))
    args = ["describe", "applicationset", "addons", "-n", "argocd", "--state-dir", str(tmp_path)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    rows = result.output.split("Conditions:\n", 1)[1].split("Events:", 1)[0].splitlines()
    assert [r.split()[:2] for r in rows] == [
        ["ErrorOccurred", "False"],
        ["ParametersGenerated", "True"],
        ["ResourcesUpToDate", "True"],
    ]
    assert len({r.index(r.split()[1]) for r in rows}) == 1  # the status column lines up
