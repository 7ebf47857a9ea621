"""The diff reads managedFields exactly as Headway's local store writes them."""

from __future__ import annotations

from typing import Any

from headway.cluster.local.api.apply import ManagedEntry, encode_managed_fields
from headway.cluster.local.api.fieldpaths import field_set
from headway.diff import compile_rules, diff_resource
from headway.diff.managed_fields import decode_owners, owned_paths, resolve_element_path
from headway.model.application import IgnoreDifferences


def workload(replicas: int, value: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "api", "namespace": "shop"},
        "spec": {
            "replicas": replicas,
            "template": {
                "spec": {
                    "containers": [
                        {"name": "api", "image": "a:1", "env": [{"name": "A", "value": value}]}
                    ]
                }
            },
        },
    }


def entry(manager: str, content: dict[str, Any], wanted: str) -> ManagedEntry:
    fields = frozenset(p for p in field_set(content) if wanted in p)
    return ManagedEntry(manager, "Update", "apps/v1", "2026-01-01T00:00:00Z", fields)


def test_local_store_managed_fields_resolve_to_concrete_paths() -> None:
    content = workload(3, "1")["spec"]
    encoded = encode_managed_fields([entry("hpa", {"spec": content}, "f:replicas")])
    owners = decode_owners(encoded)
    (path,) = owned_paths(owners, ["hpa"])
    assert resolve_element_path({"spec": content}, path) == ("spec", "replicas")


def test_ignoring_a_store_recorded_manager_hides_only_its_fields() -> None:
    live = workload(7, "1")
    spec = {"spec": live["spec"]}
    live["metadata"]["managedFields"] = encode_managed_fields(
        [
            entry("hpa", spec, "f:replicas"),
            entry("kubectl", spec, "f:image"),
        ]
    )
    rules = compile_rules([IgnoreDifferences("apps", "Deployment", None, None, (), (), ("hpa",))])
    assert not diff_resource(workload(2, "1"), live, rules).modified
    assert diff_resource(workload(2, "9"), live, rules).modified
