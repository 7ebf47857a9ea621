"""JSON patch, merge patch and strategic merge patch, on plain data."""

from __future__ import annotations

import pytest

from headway.cluster.local.api.kubeapi.patches import json_patch, merge_patch, strategic_merge_patch
from headway.cluster.local.api.kubeapi.status import ApiError

POD_SPEC = {
    "containers": [
        {"name": "app", "image": "app:1", "env": [{"name": "A", "value": "1"}]},
        {"name": "sidecar", "image": "proxy:1"},
    ],
    "volumes": [{"name": "data", "emptyDir": {}}],
    "tolerations": [{"key": "a"}],
}


def test_merge_patch_merges_objects_removes_nulls_and_replaces_lists() -> None:
    patched = merge_patch(POD_SPEC, {"containers": [{"name": "only"}], "volumes": None,
                                     "extra": {"x": 1}})
    assert patched == {"containers": [{"name": "only"}], "tolerations": [{"key": "a"}],
                       "extra": {"x": 1}}


def test_strategic_patch_merges_containers_and_env_by_name() -> None:
    patch = {"containers": [{"name": "app", "image": "app:2",
                             "env": [{"name": "B", "value": "2"}]}]}
    patched = strategic_merge_patch(POD_SPEC, patch)
    app, sidecar = patched["containers"]
    assert app["image"] == "app:2"
    assert app["env"] == [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]
    assert sidecar == {"name": "sidecar", "image": "proxy:1"}


def test_strategic_patch_directives_delete_replace_and_order() -> None:
    patched = strategic_merge_patch(POD_SPEC, {
        "containers": [{"name": "sidecar", "$patch": "delete"}],
        "volumes": [{"name": "cache", "emptyDir": {}}, {"$patch": "replace"}],
    })
    assert [c["name"] for c in patched["containers"]] == ["app"]
    assert patched["volumes"] == [{"name": "cache", "emptyDir": {}}]
    ordered = strategic_merge_patch(POD_SPEC, {
        "$setElementOrder/containers": [{"name": "sidecar"}, {"name": "app"}],
        "containers": [{"name": "app", "image": "app:3"}],
    })
    assert [c["name"] for c in ordered["containers"]] == ["sidecar", "app"]


def test_strategic_patch_replaces_lists_without_a_merge_key() -> None:
    patched = strategic_merge_patch(POD_SPEC, {"tolerations": [{"key": "b"}]})
    assert patched["tolerations"] == [{"key": "b"}]


def test_strategic_patch_merges_finalizers_as_a_set_and_deletes_from_it() -> None:
    meta = {"finalizers": ["a", "b"]}
    assert strategic_merge_patch(meta, {"finalizers": ["b", "c"]}) == {
        "finalizers": ["a", "b", "c"]}
    assert strategic_merge_patch(meta, {"$deleteFromPrimitiveList/finalizers": ["a"]}) == {
        "finalizers": ["b"]}


def test_strategic_patch_retain_keys_drops_the_others() -> None:
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}
    patched = strategic_merge_patch(strategy, {"type": "Recreate",
                                               "$retainKeys": ["type"]})
    assert patched == {"type": "Recreate"}


def test_json_patch_operations_in_order() -> None:
    doc = {"spec": {"replicas": 1, "ports": [80]}}
    patched = json_patch(doc, [
        {"op": "replace", "path": "/spec/replicas", "value": 3},
        {"op": "add", "path": "/spec/ports/-", "value": 443},
        {"op": "copy", "from": "/spec/replicas", "path": "/spec/copied"},
        {"op": "move", "from": "/spec/copied", "path": "/spec/moved"},
        {"op": "remove", "path": "/spec/ports/0"},
        {"op": "test", "path": "/spec/moved", "value": 3},
    ])
    assert patched == {"spec": {"replicas": 3, "ports": [443], "moved": 3}}
    assert doc == {"spec": {"replicas": 1, "ports": [80]}}  # the input is left alone


def test_json_patch_failures_are_api_errors() -> None:
    with pytest.raises(ApiError) as failed_test:
        json_patch({"a": 1}, [{"op": "test", "path": "/a", "value": 2}])
    assert failed_test.value.code == 422
    with pytest.raises(ApiError) as missing:
        json_patch({"a": 1}, [{"op": "replace", "path": "/b", "value": 2}])
    assert missing.value.code == 422
    with pytest.raises(ApiError) as shape:
        json_patch({"a": 1}, {"op": "add"})
    assert shape.value.code == 400
