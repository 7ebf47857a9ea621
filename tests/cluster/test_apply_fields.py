"""The pure field-ownership core of server-side apply, without a store."""

from __future__ import annotations

from typing import Any

import pytest

from headway.cluster.errors import FieldConflict, Invalid
from headway.cluster.local.api.apply import (
    ManagedEntry,
    apply_fields,
    check_applied_lists,
    decode_managed_fields,
    encode_managed_fields,
    merge,
    update_fields,
)
from headway.cluster.local.api.fieldpaths import MISSING, field_set, render_path, value_at

NOW = "2026-01-01T00:00:00Z"


def apply(live: dict[str, Any], managed: tuple[ManagedEntry, ...], applied: dict[str, Any],
          manager: str, *, force: bool = False) -> tuple[dict[str, Any], dict[str, set[str]]]:
    outcome = apply_fields(live, managed, applied, manager=manager, force=force,
                           api_version="v1", now=NOW)
    owned = {e.manager: {render_path(p) for p in e.fields} for e in outcome.managed}
    return outcome.content, owned


def entries(live: dict[str, Any], managed: tuple[ManagedEntry, ...], applied: dict[str, Any],
            manager: str) -> tuple[dict[str, Any], tuple[ManagedEntry, ...]]:
    outcome = apply_fields(live, managed, applied, manager=manager, force=False,
                           api_version="v1", now=NOW)
    return outcome.content, outcome.managed


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ({"a": 1}, {".a"}),
        ({"a": {"b": 1, "c": [1, 2]}}, {".a.b", ".a.c"}),
        ({"a": {}}, {".a"}),
        ({"containers": [{"name": "x", "image": "i"}]},
         {'.containers[name="x"]', '.containers[name="x"].image', '.containers[name="x"].name'}),
        ({"ports": [{"containerPort": 80}]},
         {'.ports[containerPort=80,protocol="TCP"]',
          '.ports[containerPort=80,protocol="TCP"].containerPort'}),
        ({"ports": [{"port": 80, "protocol": "UDP", "targetPort": 8080}]},
         {'.ports[port=80,protocol="UDP"]', '.ports[port=80,protocol="UDP"].targetPort',
          '.ports[port=80,protocol="UDP"].port', '.ports[port=80,protocol="UDP"].protocol'}),
        ({"volumeMounts": [{"name": "v", "mountPath": "/data"}]},
         {'.volumeMounts[mountPath="/data"]', '.volumeMounts[mountPath="/data"].name',
          '.volumeMounts[mountPath="/data"].mountPath'}),
        ({"finalizers": ["a", "b"]}, {'.finalizers["a"]', '.finalizers["b"]'}),
        ({"args": ["a", "b"]}, {".args"}),
    ],
)
def test_field_set(content: dict[str, Any], expected: set[str]) -> None:
    assert {render_path(p) for p in field_set(content)} == expected


def test_value_at_follows_keys() -> None:
    content = {"spec": {"containers": [{"name": "a", "image": "1"}, {"name": "b", "image": "2"}]}}
    path = ("f:spec", "f:containers", 'k:{"name":"b"}', "f:image")
    assert value_at(content, path) == "2"
    assert value_at(content, ("f:spec", "f:containers", 'k:{"name":"c"}')) is MISSING
    assert value_at(content, ("f:nope",)) is MISSING


def test_merge_rules() -> None:
    live = {"m": {"a": 1, "b": 2}, "args": [1, 2], "finalizers": ["x"],
            "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]}
    applied = {"m": {"b": 3}, "args": [9], "finalizers": ["y"],
               "env": [{"name": "B", "value": "20"}, {"name": "C", "value": "3"}]}
    assert merge(live, applied) == {
        "m": {"a": 1, "b": 3},
        "args": [9],
        "finalizers": ["x", "y"],
        "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "20"},
                {"name": "C", "value": "3"}],
    }


def test_first_apply_owns_everything_it_sent() -> None:
    content, owned = apply({}, (), {"data": {"a": "1"}}, "git")
    assert content == {"data": {"a": "1"}}
    assert owned == {"git": {".data.a"}}


def test_removal_spares_fields_shared_with_others() -> None:
    content, managed = entries({}, (), {"data": {"a": "1", "b": "2"}}, "git")
    content, managed = entries(content, managed, {"data": {"b": "2"}}, "ops")
    content, managed = entries(content, managed, {"data": {}}, "git")
    assert content == {"data": {"b": "2"}}
    assert [(e.manager, {render_path(p) for p in e.fields}) for e in managed] == [
        ("ops", {".data.b"}), ("git", {".data"})]


def test_removal_prunes_maps_it_emptied() -> None:
    content, managed = entries({}, (), {"spec": {"x": {"y": 1}}, "keep": 1}, "git")
    content, _ = entries(content, managed, {"keep": 1}, "git")
    assert content == {"keep": 1}


def test_removing_an_item_keeps_it_when_another_manager_owns_part_of_it() -> None:
    applied = {"containers": [{"name": "a", "image": "1"}, {"name": "b", "image": "2"}]}
    content, managed = entries({}, (), applied, "git")
    content, managed = entries(content, managed,
                               {"containers": [{"name": "b", "resources": {"cpu": "1"}}]}, "vpa")
    content, _ = entries(content, managed, {"containers": [{"name": "a", "image": "1"}]}, "git")
    assert content == {"containers": [{"name": "a", "image": "1"},
                                      {"name": "b", "resources": {"cpu": "1"}}]}


def test_conflict_and_force() -> None:
    content, managed = entries({}, (), {"replicas": 2, "image": "a"}, "git")
    with pytest.raises(FieldConflict) as caught:
        apply(content, managed, {"replicas": 3, "image": "a"}, "hpa")
    assert caught.value.conflicts == [(".replicas", "git")]
    content, owned = apply(content, managed, {"replicas": 3}, "hpa", force=True)
    assert content == {"replicas": 3, "image": "a"}
    assert owned == {"git": {".image"}, "hpa": {".replicas"}}


def test_replacing_a_map_with_a_scalar_conflicts_with_its_owner() -> None:
    content, managed = entries({}, (), {"spec": {"a": 1}}, "git")
    with pytest.raises(FieldConflict) as caught:
        apply(content, managed, {"spec": 5}, "other")
    assert caught.value.conflicts == [(".spec.a", "git")]


def test_update_takes_changed_fields_from_others() -> None:
    content, managed = entries({}, (), {"replicas": 2, "image": "a"}, "git")
    new = {"replicas": 5, "image": "a", "paused": True}
    after = update_fields(content, new, managed, manager="kubectl", api_version="v1", now=NOW)
    owned = {(e.manager, e.operation): {render_path(p) for p in e.fields} for e in after}
    assert owned == {("git", "Apply"): {".image"},
                     ("kubectl", "Update"): {".replicas", ".paused"}}


def test_update_drops_fields_that_are_gone() -> None:
    content, managed = entries({}, (), {"a": 1, "b": 2}, "git")
    after = update_fields(content, {"a": 1}, managed, manager="ctl", api_version="v1", now=NOW)
    assert [(e.manager, {render_path(p) for p in e.fields}) for e in after] == [
        ("git", {".a"})]


def test_managed_fields_round_trip() -> None:
    applied = {"metadata": {"labels": {"app": "x"}, "finalizers": ["f"]},
               "spec": {"containers": [{"name": "a", "image": "1", "ports": [
                   {"containerPort": 80}]}]}}
    _, managed = entries({}, (), applied, "git")
    encoded = encode_managed_fields(managed)
    assert encoded[0]["fieldsV1"]["f:metadata"]["f:finalizers"] == {'v:"f"': {}}
    assert decode_managed_fields(encoded) == managed
    assert decode_managed_fields("junk") == ()
    assert decode_managed_fields([{"manager": "x"}]) == ()


def test_keyless_items_are_invalid() -> None:
    with pytest.raises(Invalid, match=r"\.spec\.containers\[1\]"):
        check_applied_lists({"spec": {"containers": [{"name": "a"}, {"image": "b"}]}})
    check_applied_lists({"spec": {"ports": [{"containerPort": 80}]}})


def test_apply_fields_leaves_its_inputs_alone() -> None:
    content, managed = entries({}, (), {"data": {"a": "1", "b": "2"}, "x": [1]}, "git")
    snapshot = repr(content)
    applied: dict[str, Any] = {"x": [1]}  # withdraws the whole map `data`
    after, _ = entries(content, managed, applied, "git")
    assert after == {"x": [1]}
    assert repr(content) == snapshot
    assert applied == {"x": [1]}
