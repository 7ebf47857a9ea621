"""`update` (Kubernetes' PUT), dry-run apply (the merged object, for diffs) and delete
preconditions.

The VirtualService here is built into the local store; a backend over a real API server
runs this suite with Istio's CRDs installed."""

from __future__ import annotations

import copy

import pytest

from cluster.contract.objects import configmap
from cluster.contract.test_discovery import crd
from headway.cluster.errors import Conflict, FieldConflict, NotFound
from headway.cluster.protocol import Cluster
from headway.model.obj import Obj


def _virtual_service(routes: list[Obj]) -> Obj:
    return {
        "apiVersion": "networking.istio.io/v1beta1",
        "kind": "VirtualService",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"hosts": ["web"], "http": [{"name": "primary", "route": routes}]},
    }


def _route(host: str, weight: int) -> Obj:
    return {"destination": {"host": host}, "weight": weight}


def test_update_replaces_a_whole_route_list(cluster: Cluster) -> None:
    cluster.apply(_virtual_service([_route("stable", 100), _route("canary", 0)]),
                  field_manager="git")
    live = cluster.get("networking.istio.io/v1beta1", "VirtualService", "web")
    live["spec"]["http"][0]["route"] = [_route("stable", 90), _route("canary", 10)]
    updated = cluster.update(live, field_manager="router")
    assert updated["spec"]["http"][0]["route"] == [_route("stable", 90), _route("canary", 10)]
    assert int(updated["metadata"]["resourceVersion"]) > int(live["metadata"]["resourceVersion"])
    again = cluster.get("networking.istio.io/v1beta1", "VirtualService", "web")
    assert again["spec"] == updated["spec"]


def test_update_removes_what_the_object_no_longer_says(cluster: Cluster) -> None:
    cluster.apply(configmap("a", {"keep": "1", "drop": "2"}, labels={"x": "y"}),
                  field_manager="git")
    live = cluster.get("v1", "ConfigMap", "a")
    del live["data"]["drop"]
    del live["metadata"]["labels"]
    updated = cluster.update(live, field_manager="editor")
    assert updated["data"] == {"keep": "1"}
    assert "labels" not in updated["metadata"]


def test_update_with_a_stale_version_is_a_conflict(cluster: Cluster) -> None:
    cluster.apply(configmap("a", {"k": "1"}), field_manager="git")
    first = cluster.get("v1", "ConfigMap", "a")
    second = copy.deepcopy(first)
    first["data"] = {"k": "first"}
    cluster.update(first, field_manager="one")
    second["data"] = {"k": "second"}
    with pytest.raises(Conflict):
        cluster.update(second, field_manager="two")
    assert cluster.get("v1", "ConfigMap", "a")["data"] == {"k": "first"}


def test_update_never_writes_status(cluster: Cluster) -> None:
    # A custom kind with a status subresource and no controller: on a real cluster a
    # Deployment's status would be the deployment controller's to write meanwhile.
    definition = crd()
    definition["spec"]["versions"][0]["subresources"] = {"status": {}}
    cluster.apply(definition, field_manager="git")
    widget = {"apiVersion": "example.com/v1", "kind": "Widget",
              "metadata": {"name": "w", "namespace": "default"}, "spec": {"size": 1}}
    cluster.apply(widget, field_manager="git")
    cluster.patch_status("example.com/v1", "Widget", "w", None, {"ready": 1})
    live = cluster.get("example.com/v1", "Widget", "w")
    live["status"] = {"ready": 99}
    live["spec"]["size"] = 2
    updated = cluster.update(live, field_manager="editor")
    assert updated["status"] == {"ready": 1}
    assert updated["spec"] == {"size": 2}


def test_update_of_a_missing_object_is_not_found(cluster: Cluster) -> None:
    with pytest.raises(NotFound):
        cluster.update(configmap("absent"), field_manager="editor")


def test_updated_fields_belong_to_the_updater(cluster: Cluster) -> None:
    cluster.apply(configmap("a", {"size": "1"}), field_manager="git")
    live = cluster.get("v1", "ConfigMap", "a")
    live["data"]["size"] = "5"
    cluster.update(live, field_manager="autoscaler")
    with pytest.raises(FieldConflict) as raised:
        cluster.apply(configmap("a", {"size": "1"}), field_manager="git")
    assert (".data.size", "autoscaler") in raised.value.conflicts


def test_dry_run_apply_returns_the_merged_object_and_stores_nothing(cluster: Cluster) -> None:
    cluster.apply(configmap("a", {"size": "1"}), field_manager="git")
    live = cluster.get("v1", "ConfigMap", "a")
    live["metadata"]["annotations"] = {"owner": "someone-else"}
    live = cluster.update(live, field_manager="editor")
    preview = cluster.apply(configmap("a", {"size": "3"}), field_manager="git", dry_run=True)
    assert preview["data"] == {"size": "3"}
    assert preview["metadata"]["annotations"] == {"owner": "someone-else"}  # merged, not ours
    assert preview["metadata"]["uid"] == live["metadata"]["uid"]
    assert cluster.get("v1", "ConfigMap", "a") == live


def test_delete_preconditions_spare_a_changed_or_recreated_object(cluster: Cluster) -> None:
    first = cluster.apply(configmap("a", {"k": "1"}), field_manager="git")
    changed = cluster.apply(configmap("a", {"k": "2"}), field_manager="git")
    with pytest.raises(Conflict):
        cluster.delete("v1", "ConfigMap", "a",
                       resource_version=first["metadata"]["resourceVersion"])
    cluster.delete("v1", "ConfigMap", "a")
    cluster.apply(configmap("a", {"k": "3"}), field_manager="git")
    with pytest.raises(Conflict):
        cluster.delete("v1", "ConfigMap", "a", uid=changed["metadata"]["uid"])
    assert cluster.get("v1", "ConfigMap", "a")["data"] == {"k": "3"}


def test_a_dry_run_update_stores_nothing(cluster: Cluster) -> None:
    cluster.apply(configmap("a", {"k": "1"}), field_manager="git")
    live = cluster.get("v1", "ConfigMap", "a")
    edited = dict(live, data={"k": "2"})
    preview = cluster.update(edited, field_manager="editor", dry_run=True)
    assert preview["data"] == {"k": "2"}
    assert cluster.get("v1", "ConfigMap", "a") == live
    stale = dict(live, data={"k": "3"})
    cluster.update(dict(live, data={"k": "4"}), field_manager="editor")
    with pytest.raises(Conflict):  # a dry run checks the precondition too
        cluster.update(stale, field_manager="editor", dry_run=True)
