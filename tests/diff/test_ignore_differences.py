"""ignoreDifferences: JSON pointers, jq paths, managed-field managers, matching rules,
unmatched-entry warnings and RespectIgnoreDifferences."""

from __future__ import annotations

from typing import Any

import pytest

from headway.diff import (
    IgnoreRuleError,
    apply_ignore_rules_to_desired,
    compile_rules,
    diff_objects,
    diff_resource,
)
from headway.model.application import IgnoreDifferences


def entry(
    kind: str,
    *,
    group: str = "",
    name: str | None = None,
    namespace: str | None = None,
    pointers: tuple[str, ...] = (),
    jq: tuple[str, ...] = (),
    managers: tuple[str, ...] = (),
) -> IgnoreDifferences:
    return IgnoreDifferences(group, kind, name, namespace, pointers, jq, managers)


def deployment(replicas: int = 2, name: str = "api") -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "shop"},
        "spec": {
            "replicas": replicas,
            "template": {"spec": {"containers": [{"name": "api", "image": "a:1"}]}},
        },
    }


def virtual_service(weights: tuple[int, int]) -> dict[str, Any]:
    return {
        "apiVersion": "networking.istio.io/v1beta1",
        "kind": "VirtualService",
        "metadata": {"name": "checkout", "namespace": "shop"},
        "spec": {
            "http": [
                {
                    "name": "primary",
                    "route": [
                        {"destination": {"host": "stable"}, "weight": weights[0]},
                        {"destination": {"host": "canary"}, "weight": weights[1]},
                    ],
                }
            ]
        },
    }


def test_json_pointer_ignores_the_field() -> None:
    rules = compile_rules([entry("Deployment", group="apps", pointers=("/spec/replicas",))])
    assert diff_resource(deployment(2), deployment(5)).modified
    assert not diff_resource(deployment(2), deployment(5), rules).modified


def test_json_pointer_escapes() -> None:
    desired = deployment()
    desired["metadata"]["annotations"] = {"example.com/a~b": "x", "team/owner": "y"}
    live = deployment()
    live["metadata"]["annotations"] = {"example.com/a~b": "z", "team/owner": "w"}
    rules = compile_rules(
        [
            entry(
                "Deployment",
                group="apps",
                pointers=(
                    "/metadata/annotations/example.com~1a~0b",
                    "/metadata/annotations/team~1owner",
                ),
            )
        ]
    )
    assert not diff_resource(desired, live, rules).modified


def test_jq_path_expression_ignores_every_matching_path() -> None:
    rules = compile_rules(
        [entry("VirtualService", group="networking.istio.io", jq=(".spec.http[].route[].weight",))]
    )
    desired, live = virtual_service((100, 0)), virtual_service((80, 20))
    assert diff_resource(desired, live).modified
    assert not diff_resource(desired, live, rules).modified
    live["spec"]["http"][0]["route"][1]["destination"]["host"] = "elsewhere"
    assert diff_resource(desired, live, rules).modified  # only the weights are ignored


def test_jq_expression_that_does_not_apply_to_an_object_is_harmless() -> None:
    rules = compile_rules([entry("*", group="*", jq=(".spec.http[].route[].weight",))])
    assert not diff_resource(deployment(), deployment(), rules).modified


def test_bad_pointer_and_bad_jq_name_the_entry() -> None:
    with pytest.raises(IgnoreRuleError, match=r"ignoreDifferences\[0\].jsonPointers"):
        compile_rules([entry("Deployment", pointers=("spec/replicas",))])
    with pytest.raises(IgnoreRuleError, match=r"ignoreDifferences\[1\].jqPathExpressions\[0\]"):
        compile_rules([entry("Deployment"), entry("Deployment", jq=(".spec[",))])


def test_entry_without_group_matches_only_the_core_group() -> None:
    trap = compile_rules([entry("Deployment", pointers=("/spec/replicas",))])
    assert diff_resource(deployment(2), deployment(5), trap).modified
    result = diff_objects([deployment(2)], [deployment(5)], rules=trap)
    assert result.warnings() == (
        "ignoreDifferences[0] (group='' kind='Deployment') matches no resource of this app "
        "(an entry without group matches only the core group; did you forget group?)",
    )


def test_kind_and_group_globs_and_exact_name_and_namespace() -> None:
    rules = compile_rules(
        [
            entry("*", group="apps", name="api", pointers=("/spec/replicas",)),
            entry("Deployment", group="apps", namespace="other", pointers=("/spec/template",)),
        ]
    )
    result = diff_objects(
        [deployment(2), deployment(2, name="worker")],
        [deployment(5), deployment(5, name="worker")],
    )
    assert len(result.modified) == 2
    ignored = diff_objects(
        [deployment(2), deployment(2, name="worker")],
        [deployment(5), deployment(5, name="worker")],
        rules=rules,
    )
    assert ignored.modified == (("apps", "Deployment", "shop", "worker"),)
    assert [r.index for r in ignored.unmatched] == [1]
    assert ignored.warnings() == (
        "ignoreDifferences[1] (group='apps' kind='Deployment') matches no resource of this app",
    )


def test_managed_fields_managers_ignore_fields_owned_by_those_managers() -> None:
    live = deployment(5)
    live["metadata"]["managedFields"] = [
        {
            "manager": "argocd-controller",
            "operation": "Apply",
            "fieldsV1": {
                "f:spec": {
                    "f:template": {
                        "f:spec": {
                            "f:containers": {
                                'k:{"name":"api"}': {".": {}, "f:image": {}, "f:name": {}}
                            }
                        }
                    }
                }
            },
        },
        {
            "manager": "kube-controller-manager",
            "operation": "Update",
            "fieldsV1": {"f:spec": {"f:replicas": {}}},
        },
    ]
    rules = compile_rules(
        [entry("Deployment", group="apps", managers=("kube-controller-manager",))]
    )
    assert not diff_resource(deployment(2), live, rules).modified
    live["spec"]["template"]["spec"]["containers"][0]["image"] = "a:2"
    assert diff_resource(deployment(2), live, rules).modified


def test_respect_ignore_differences_keeps_live_values_when_applying() -> None:
    rules = compile_rules(
        [entry("VirtualService", group="networking.istio.io", jq=(".spec.http[].route[].weight",))]
    )
    desired, live = virtual_service((100, 0)), virtual_service((80, 20))
    to_apply = apply_ignore_rules_to_desired(desired, live, rules)
    weights = [r["weight"] for r in to_apply["spec"]["http"][0]["route"]]
    assert weights == [80, 20]
    assert desired["spec"]["http"][0]["route"][0]["weight"] == 100  # input untouched
    assert apply_ignore_rules_to_desired(desired, None, rules) == desired


def test_respect_ignore_differences_drops_fields_live_does_not_have() -> None:
    rules = compile_rules([entry("PersistentVolumeClaim", pointers=("/spec/volumeName",))])
    desired = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "d"},
        "spec": {"volumeName": "", "storageClassName": "fast"},
    }
    bound = {**desired, "spec": {"volumeName": "pv-123", "storageClassName": "fast"}}
    assert apply_ignore_rules_to_desired(desired, bound, rules)["spec"]["volumeName"] == "pv-123"
    unbound = {**desired, "spec": {"storageClassName": "fast"}}
    assert "volumeName" not in apply_ignore_rules_to_desired(desired, unbound, rules)["spec"]


def test_respect_ignore_differences_with_managed_fields() -> None:
    rules = compile_rules([entry("Deployment", group="apps", managers=("hpa",))])
    live = deployment(7)
    live["metadata"]["managedFields"] = [
        {"manager": "hpa", "operation": "Update", "fieldsV1": {"f:spec": {"f:replicas": {}}}}
    ]
    assert apply_ignore_rules_to_desired(deployment(2), live, rules)["spec"]["replicas"] == 7
