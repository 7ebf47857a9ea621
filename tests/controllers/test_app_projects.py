"""An Application cannot leave its project (issue 16, item 1).

The reported escape: a project limited to `team-a` with no cluster-scoped kinds deployed a
child Application into `team-a`; Headway reconciled it although it lives outside the control
namespace, and its `project: default` (absent) became a permissive built-in default, so the
child created a ConfigMap in `team-b` and a `*/*/*` ClusterRole. Each path is tried here.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from app_harness import (
    APPS_NS,
    Harness,
    application,
    config_map,
    make_harness,
    manifests,
    message,
    phase,
    request_sync,
)

from headway.clock import VirtualClock
from headway.cluster.errors import ClusterError
from headway.controllers.app.controller import APP_API_VERSION, ApplicationController
from headway.controllers.cluster_registry import ClusterRegistry

IN_CLUSTER = "https://kubernetes.default.svc"
CLUSTER_ROLE = {
    "apiVersion": "rbac.authorization.k8s.io/v1",
    "kind": "ClusterRole",
    "metadata": {"name": "everything"},
    "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}],
}


def _team_b_config_map() -> dict[str, Any]:
    obj = config_map("loot")
    obj["metadata"]["namespace"] = "team-b"
    return obj


def _team_b_config_map_marked_as_shops() -> dict[str, Any]:
    """Another team's object that carries the tracking marks of the app `shop`."""
    obj = _team_b_config_map()
    obj["metadata"]["labels"] = {"app.kubernetes.io/instance": "shop"}
    obj["metadata"]["annotations"] = {
        "argocd.argoproj.io/tracking-id": "shop:/ConfigMap:team-b/loot"
    }
    return obj


def _project(name: str, **spec: Any) -> dict[str, Any]:
    """A project limited to namespace team-a with no cluster-scoped kinds, plus `spec`."""
    body: dict[str, Any] = {
        "sourceRepos": ["*"],
        "destinations": [{"server": IN_CLUSTER, "namespace": "team-a"}],
        "clusterResourceWhitelist": [],
        **spec,
    }
    return {
        "apiVersion": APP_API_VERSION,
        "kind": "AppProject",
        "metadata": {"name": name, "namespace": APPS_NS},
        "spec": body,
    }


def _child(url: str, *, project: str, path: str, namespace: str | None) -> dict[str, Any]:
    """An Application as a parent deploys it; without a namespace it lands in the parent's
    destination namespace."""
    child = application("child", url, path=path, namespace="team-a", automated={}, project=project)
    if namespace is None:
        del child["metadata"]["namespace"]
    else:
        child["metadata"]["namespace"] = namespace
    return child


def _harness(tmp_path: Path, clock: VirtualClock, files: Mapping[str, str]) -> Harness:
    h = make_harness(tmp_path, clock, files)
    for namespace in ("team-a", "team-b"):
        h.store.apply(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
            field_manager="test",
        )
    h.store.apply(_project("team-a"), field_manager="admin")
    return h


def _serving(h: Harness, *app_namespaces: str) -> None:
    h.controller = ApplicationController(
        store=h.store,
        clusters=ClusterRegistry(h.store),
        sources=h.reader,
        clock=h.clock,
        app_namespaces=app_namespaces,
    )


def _reconcile_everything(h: Harness, steps: int = 12) -> None:
    """Step every Application in the store, whatever its namespace, and play the Job and
    Deployment controllers: what `headway serve` would do."""
    for _ in range(steps):
        for app in h.store.list(APP_API_VERSION, "Application"):
            meta = app["metadata"]
            h.controller.reconcile(str(meta["name"]), str(meta.get("namespace") or "default"))


def _escaped(h: Harness) -> list[str]:
    found = []
    if h.exists("ConfigMap", "loot", "team-b"):
        found.append("ConfigMap team-b/loot")
    if h.exists("ClusterRole", "everything", None):
        found.append("ClusterRole everything")
    return found


def _conditions(h: Harness, name: str, namespace: str) -> list[str]:
    app = h.store.get(APP_API_VERSION, "Application", name, namespace)
    return [str(c["message"]) for c in (app.get("status") or {}).get("conditions") or []]


def _exists_app(h: Harness, name: str, namespace: str) -> bool:
    return h.exists("Application", name, namespace)


def _parent(h: Harness, *, project: str = "team-a") -> dict[str, Any]:
    return application(
        "team-a-apps", h.remote.url, path="apps", namespace="team-a", automated={},
        project=project,
    )


def _files(child: Mapping[str, Any], *escape: Mapping[str, Any]) -> dict[str, str]:
    objects: Sequence[Mapping[str, Any]] = escape or (_team_b_config_map(), CLUSTER_ROLE)
    return {"apps/child.yaml": manifests(child), "escape/all.yaml": manifests(*objects)}


@pytest.mark.parametrize("default_project", ["missing", "permissive"])
def test_a_child_in_the_team_namespace_is_not_served(
    tmp_path: Path, clock: VirtualClock, default_project: str
) -> None:
    h = _harness(tmp_path, clock, {})
    h.remote.commit(_files(_child(h.remote.url, project="default", path="escape", namespace=None)))
    if default_project == "missing":
        h.store.delete(APP_API_VERSION, "AppProject", "default", APPS_NS)
    h.install(_parent(h))
    _reconcile_everything(h)
    assert _exists_app(h, "child", "team-a")  # the parent may create it in its own namespace
    (condition,) = _conditions(h, "child", "team-a")
    assert condition.startswith(
        "Application team-a/child is not reconciled: namespace team-a is not one this "
        "controller serves Applications in (argocd)"
    )
    parent = h.store.get(APP_API_VERSION, "Application", "team-a-apps", APPS_NS)["status"]
    assert parent["health"]["status"] == "Degraded"  # the parent says why its child idles
    assert "InvalidSpecError: Application team-a/child is not reconciled" in (
        parent["health"]["message"]
    )
    assert _escaped(h) == []


def test_a_child_in_the_control_namespace_is_refused_by_the_parents_project(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = _harness(tmp_path, clock, {})
    child = _child(h.remote.url, project="default", path="escape", namespace=APPS_NS)
    h.remote.commit(_files(child))
    h.install(_parent(h))
    _reconcile_everything(h)
    status = dict(h.store.get(APP_API_VERSION, "Application", "team-a-apps", APPS_NS)["status"])
    assert phase(status) == "Failed"
    assert "Application/child: project 'team-a': destination" in message(status)
    assert "namespace argocd) is not permitted" in message(status)
    assert not _exists_app(h, "child", APPS_NS)
    assert _escaped(h) == []


def test_a_served_team_namespace_still_needs_the_projects_source_namespaces(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = _harness(tmp_path, clock, {})
    h.remote.commit(_files(_child(h.remote.url, project="default", path="escape", namespace=None)))
    _serving(h, "team-*")
    h.install(_parent(h))
    _reconcile_everything(h)
    (condition,) = _conditions(h, "child", "team-a")
    assert condition == (
        "project 'default': an Application in namespace team-a may not use this project "
        "(sourceNamespaces does not list it)"
    )
    assert _escaped(h) == []


def test_a_child_is_confined_by_its_own_project_at_every_depth(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = _harness(tmp_path, clock, {})
    h.store.apply(_project("team-a", sourceNamespaces=["team-a"]), field_manager="admin")
    grandchild = _child(h.remote.url, project="default", path="escape", namespace=None)
    grandchild["metadata"]["name"] = "grandchild"
    child = _child(h.remote.url, project="team-a", path="nested", namespace=None)
    files = _files(child)
    files["nested/all.yaml"] = manifests(grandchild, _team_b_config_map(), CLUSTER_ROLE)
    h.remote.commit(files)
    _serving(h, "team-a")
    h.install(_parent(h))
    _reconcile_everything(h)
    child_status = dict(h.store.get(APP_API_VERSION, "Application", "child", "team-a")["status"])
    assert phase(child_status) == "Failed"
    refusals = message(child_status)
    assert "ClusterRole/everything: project 'team-a': rbac.authorization.k8s.io/ClusterRole" in (
        refusals
    )
    assert "cluster-scoped kind not in clusterResourceWhitelist" in refusals
    assert _escaped(h) == []
    # Without the escaping objects the child syncs its grandchild, which may not use the
    # permissive `default` project from team-a.
    h.remote.commit({"nested/all.yaml": manifests(grandchild)})
    h.reader.mark_changed(h.remote.url)
    _reconcile_everything(h)
    assert _exists_app(h, "grandchild", "team-a")
    (condition,) = _conditions(h, "grandchild", "team-a")
    assert "project 'default': an Application in namespace team-a may not use" in condition
    assert _escaped(h) == []


def test_a_parents_project_must_permit_creating_applications(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = _harness(tmp_path, clock, {})
    blacklist = [{"group": "argoproj.io", "kind": "Application"}]
    h.store.apply(
        _project("team-a", namespaceResourceBlacklist=blacklist), field_manager="admin"
    )
    h.remote.commit(_files(_child(h.remote.url, project="team-a", path="escape", namespace=None)))
    h.install(_parent(h))
    _reconcile_everything(h)
    status = dict(h.store.get(APP_API_VERSION, "Application", "team-a-apps", APPS_NS)["status"])
    assert phase(status) == "Failed"
    assert "argoproj.io/Application child: kind is in namespaceResourceBlacklist" in message(
        status
    )
    assert not _exists_app(h, "child", "team-a")


def test_a_missing_project_is_an_error_not_a_permissive_default(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = _harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("settings"))})
    h.store.delete(APP_API_VERSION, "AppProject", "default", APPS_NS)
    h.install(application("shop", h.remote.url, path="app", automated={}))
    status = h.run("shop", lambda s: bool(s.get("conditions")))
    assert status["conditions"][0]["type"] == "InvalidSpecError"
    assert status["conditions"][0]["message"] == (
        "application references project default which does not exist "
        "(AppProjects are read from namespace argocd)"
    )
    assert status["sync"]["status"] == "Unknown"
    assert not h.exists("ConfigMap", "settings")


def test_a_project_outside_the_control_namespace_is_not_used(
    tmp_path: Path, clock: VirtualClock
) -> None:
    """A team that can write in its own namespace cannot bring its own project there."""
    h = _harness(tmp_path, clock, {"escape/all.yaml": manifests(_team_b_config_map())})
    sneaky = _project("sneaky", destinations=[{"server": "*", "namespace": "*"}])
    sneaky["spec"]["sourceNamespaces"] = ["team-a"]
    sneaky["metadata"]["namespace"] = "team-a"
    h.store.apply(sneaky, field_manager="test")
    _serving(h, "team-a")
    h.install(_child(h.remote.url, project="sneaky", path="escape", namespace="team-a"))
    _reconcile_everything(h)
    (condition,) = _conditions(h, "child", "team-a")
    assert condition.startswith("application references project sneaky which does not exist")
    assert _escaped(h) == []


def test_skipping_the_dry_run_does_not_skip_the_project(
    tmp_path: Path, clock: VirtualClock
) -> None:
    loot = _team_b_config_map()
    loot["metadata"]["annotations"] = {
        "argocd.argoproj.io/sync-options": "SkipDryRunOnMissingResource=true"
    }
    h = _harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("settings"), loot)})
    shop = application("shop", h.remote.url, path="app", project="team-a", namespace="team-a")
    h.install(shop)
    request_sync(h, "shop")
    status = h.run("shop", lambda s: phase(s) in ("Succeeded", "Failed"))
    assert phase(status) == "Failed"
    assert "ConfigMap/loot: project 'team-a': destination (server" in message(status)
    assert "namespace team-b) is not permitted" in message(status)
    assert _escaped(h) == []


def test_a_tracked_object_outside_the_project_is_not_pruned(
    tmp_path: Path, clock: VirtualClock
) -> None:
    """Tracking is by app name: another app's object (here in team-b) that carries this
    app's tracking marks is outside this app's project, so pruning it is refused."""
    h = _harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("settings"))})
    h.store.apply(_team_b_config_map_marked_as_shops(), field_manager="other-team")
    shop = application("shop", h.remote.url, path="app", project="team-a", namespace="team-a")
    h.install(shop)
    request_sync(h, "shop", prune=True)
    status = h.run("shop", lambda s: phase(s) in ("Succeeded", "Failed"))
    assert phase(status) == "Failed"
    (pruned,) = [r for r in status["operationState"]["syncResult"]["resources"]
                 if r["name"] == "loot"]
    assert pruned["status"] == "SyncFailed"
    assert "namespace team-b) is not permitted" in pruned["message"]
    assert h.exists("ConfigMap", "loot", "team-b")


def test_same_named_applications_in_two_namespaces_track_their_own_objects(
    tmp_path: Path, clock: VirtualClock
) -> None:
    """Tracking uses Argo CD's instance name (`<namespace>_<name>` outside argocd), so the
    team's `shop` neither sees nor prunes the control namespace's `shop` objects."""
    files = {"app/all.yaml": manifests(config_map("settings"))}
    h = _harness(tmp_path, clock, files)
    h.store.apply(_project("team-a", sourceNamespaces=["team-a"]), field_manager="admin")
    _serving(h, "team-a")
    h.install(application("shop", h.remote.url, path="app", automated={"prune": True}))
    team = application("shop", h.remote.url, path="app", namespace="team-a", project="team-a",
                       automated={"prune": True})
    team["metadata"]["namespace"] = "team-a"
    h.install(team)
    _reconcile_everything(h)
    ours = h.get("ConfigMap", "settings", "demo")
    theirs = h.get("ConfigMap", "settings", "team-a")
    assert ours["metadata"]["labels"]["app.kubernetes.io/instance"] == "shop"
    assert theirs["metadata"]["labels"]["app.kubernetes.io/instance"] == "team-a_shop"
    assert theirs["metadata"]["annotations"]["argocd.argoproj.io/tracking-id"] == (
        "team-a_shop:/ConfigMap:team-a/settings"
    )
    for namespace, where in ((APPS_NS, "demo"), ("team-a", "team-a")):
        status = h.store.get(APP_API_VERSION, "Application", "shop", namespace)["status"]
        assert status["sync"]["status"] == "Synced"
        assert [(r["namespace"], r["name"]) for r in status["resources"]] == [(where, "settings")]


def test_an_app_namespaces_regex_that_does_not_compile_is_a_usage_error(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "headway", "serve", "--state-dir", str(tmp_path),
         "--app-namespaces", "team-*,/team-[a/"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert "/team-[a/: not a regular expression" in " ".join(result.stderr.split())
    assert "Traceback" not in result.stderr


def test_cascade_deletion_leaves_objects_outside_the_project(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = _harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("settings"))})
    h.store.apply(_team_b_config_map_marked_as_shops(), field_manager="other-team")
    shop = application("shop", h.remote.url, path="app", project="team-a", namespace="team-a")
    shop["metadata"]["finalizers"] = ["resources-finalizer.argocd.argoproj.io"]
    h.install(shop)
    request_sync(h, "shop")
    h.run("shop", lambda s: phase(s) in ("Succeeded", "Failed"))
    assert h.exists("ConfigMap", "settings", "team-a")
    h.store.delete(APP_API_VERSION, "Application", "shop", APPS_NS)
    for _ in range(5):
        if h.step("shop") is None:
            break
    assert not h.exists("ConfigMap", "settings", "team-a")
    assert h.exists("ConfigMap", "loot", "team-b")
    assert not _exists_app(h, "shop", APPS_NS)


CLUSTER_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "clusterwidgets.example.com"},
    "spec": {
        "group": "example.com",
        "names": {"kind": "ClusterWidget", "plural": "clusterwidgets"},
        "scope": "Cluster",
        "versions": [{"name": "v1", "served": True, "storage": True}],
    },
}
CLUSTER_WIDGET = {
    "apiVersion": "example.com/v1",
    "kind": "ClusterWidget",
    "metadata": {"name": "everywhere"},
    "spec": {},
}


@pytest.mark.parametrize("crd", ["installed", "in the app"])
def test_a_cluster_scoped_custom_kind_needs_the_cluster_whitelist(
    tmp_path: Path, clock: VirtualClock, crd: str
) -> None:
    """The built-in table knows no custom kinds: their scope comes from discovery or from a
    CRD in the app, so a cluster-scoped one cannot pass as namespaced."""
    objects = [CLUSTER_WIDGET] if crd == "installed" else [CLUSTER_CRD, CLUSTER_WIDGET]
    h = _harness(tmp_path, clock, {"app/all.yaml": manifests(*objects)})
    whitelist = [{"group": "apiextensions.k8s.io", "kind": "CustomResourceDefinition"}]
    h.store.apply(_project("team-a", clusterResourceWhitelist=whitelist), field_manager="admin")
    if crd == "installed":
        h.store.apply(dict(CLUSTER_CRD), field_manager="admin")
    shop = application("shop", h.remote.url, path="app", project="team-a", namespace="team-a")
    h.install(shop)
    request_sync(h, "shop")
    status = h.run("shop", lambda s: phase(s) in ("Succeeded", "Failed"))
    assert phase(status) == "Failed"
    assert (
        "ClusterWidget/everywhere: project 'team-a': example.com/ClusterWidget everywhere: "
        "cluster-scoped kind not in clusterResourceWhitelist"
    ) in message(status)
    with pytest.raises(ClusterError):  # NotFound, or the kind is not served at all
        h.store.get("example.com/v1", "ClusterWidget", "everywhere")
