"""argocd-cm's system-wide ignore rules merged with an Application's own, and the compare options.

Before: Headway applied only `spec.ignoreDifferences`; an argocd-cm rule (Argo CD's documented
`resource.customizations.ignoreDifferences.all` for `/spec/replicas`, or managed-field
managers) changed nothing, and `ignoreResourceStatusField`/`ignoreAggregatedRoles` were not
read.
"""

from __future__ import annotations

from typing import Any

import pytest

from headway.diff import (
    apply_ignore_rules_to_desired,
    compile_rules,
    compile_system_rules,
    diff_objects,
    diff_resource,
)
from headway.model.application import IgnoreDifferences
from headway.model.argocd_diff import CompareOptions, StatusScope, diff_customizations

IGNORE = "resource.customizations.ignoreDifferences."


def system(data: dict[str, str]) -> Any:
    found = diff_customizations(data)
    assert found.errors == ()
    return compile_system_rules(found.ignores)


def deployment(replicas: int, *, managers: dict[str, dict[str, Any]] | None = None) -> Any:
    meta: dict[str, Any] = {"name": "api", "namespace": "shop"}
    if managers:
        meta["managedFields"] = [
            {"manager": name, "operation": "Update", "fieldsV1": fields}
            for name, fields in managers.items()
        ]
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta,
        "spec": {"replicas": replicas, "template": {"spec": {"containers": [{"name": "a"}]}}},
    }


def service(port: int, *, managers: dict[str, dict[str, Any]] | None = None) -> Any:
    obj = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "api", "namespace": "shop"},
        "spec": {"ports": [{"port": port}]},
    }
    if managers:
        obj["metadata"]["managedFields"] = [
            {"manager": name, "operation": "Update", "fieldsV1": fields}
            for name, fields in managers.items()
        ]
    return obj


@pytest.mark.parametrize(
    ("key", "hidden"),
    [
        (IGNORE + "all", True),
        (IGNORE + "apps_Deployment", True),
        (IGNORE + "apps_StatefulSet", False),
        (IGNORE + "Deployment", False),  # no group: the core group only, as in Argo CD
    ],
)
def test_a_system_rule_hides_what_it_names_for_the_kinds_its_key_names(
    key: str, hidden: bool
) -> None:
    rules = system({key: "jsonPointers:\n- /spec/replicas\n"})
    assert diff_resource(deployment(2), deployment(5), rules).modified is not hidden


def test_block_keys_are_globs_for_pointers() -> None:
    block = '"*/Deploy*":\n  ignoreDifferences: |\n    jsonPointers: [/spec/replicas]\n'
    rules = system({"resource.customizations": block})
    assert not diff_resource(deployment(2), deployment(5), rules).modified


REPLICAS_BY_HPA = {"f:spec": {"f:replicas": {}}}


@pytest.mark.parametrize(
    ("key", "hidden"),
    [
        (IGNORE + "all", True),
        (IGNORE + "apps_Deployment", True),
        # Argo CD looks managers up by the literal "<group>/<kind>": a glob key never matches
        ('"*/Deployment"', False),
    ],
)
def test_system_managers_apply_only_where_argo_cd_looks_them_up(key: str, hidden: bool) -> None:
    text = "managedFieldsManagers: [kube-controller-manager]\n"
    if key.startswith('"'):
        data = {"resource.customizations": f"{key}:\n  ignoreDifferences: |\n    {text}"}
    else:
        data = {key: text}
    live = deployment(5, managers={"kube-controller-manager": REPLICAS_BY_HPA})
    assert diff_resource(deployment(2), live, system(data)).modified is not hidden


def test_managers_under_a_key_without_a_group_apply_to_nothing_as_in_argo_cd() -> None:
    live = service(8080, managers={"mesh": {"f:spec": {"f:ports": {}}}})
    found = diff_customizations({IGNORE + "Service": "managedFieldsManagers: [mesh]"})
    assert not found.errors and compile_system_rules(found.ignores) == ()
    assert diff_resource(service(80), live, compile_system_rules(found.ignores)).modified
    written_with_empty_group = system({IGNORE + "_Service": "managedFieldsManagers: [mesh]"})
    assert not diff_resource(service(80), live, written_with_empty_group).modified


def test_app_and_system_rules_add_up_and_only_the_apps_own_can_match_nothing() -> None:
    own = IgnoreDifferences("apps", "StatefulSet", None, None, ("/spec/replicas",), (), ())
    rules = (*compile_rules([own]), *system({IGNORE + "Service": "jsonPointers: [/spec/x]"}))
    result = diff_objects([deployment(2)], [deployment(2)], rules=rules, namespace="shop")
    assert [rule.index for rule in result.unmatched] == [0]
    assert [rule.origin for rule in result.unmatched] == [""]


def test_respect_ignore_differences_keeps_what_a_system_rule_ignores() -> None:
    rules = system({IGNORE + "all": "jsonPointers: [/spec/replicas]"})
    applied = apply_ignore_rules_to_desired(deployment(2), deployment(5), rules)
    assert applied["spec"]["replicas"] == 5


def crd(stored: list[str]) -> Any:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com"},
        "status": {"storedVersions": stored},
    }


def widget(phase: str) -> Any:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "shop"},
        "status": {"phase": phase},
    }


@pytest.mark.parametrize(
    ("scope", "crd_modified", "widget_modified"),
    [
        (StatusScope.ALL, False, False),  # Argo CD 3's default, and Headway's
        (StatusScope.CRD, False, True),
        (StatusScope.NONE, True, True),
    ],
)
def test_ignore_resource_status_field_decides_whose_status_is_compared(
    scope: StatusScope, crd_modified: bool, widget_modified: bool
) -> None:
    options = CompareOptions(ignore_status=scope)
    assert diff_resource(crd(["v1"]), crd(["v1", "v2"]), (), options).modified is crd_modified
    assert diff_resource(widget("Ready"), widget("Busy"), (), options).modified is widget_modified
    assert not diff_resource(widget("Ready"), widget("Ready"), (), options).modified


def aggregated(rules: list[Any] | None) -> Any:
    role: dict[str, Any] = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "monitoring"},
        "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"aggregate": "true"}}]},
    }
    if rules is not None:
        role["rules"] = rules
    return role


def test_ignore_aggregated_roles_leaves_the_rules_the_aggregator_writes() -> None:
    written = [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]
    desired, live = aggregated([]), aggregated(written)
    assert diff_resource(desired, live).modified  # Argo CD's default: compared
    options = CompareOptions(ignore_aggregated_roles=True)
    assert not diff_resource(desired, live, (), options).modified
    plain = {**live}
    del plain["aggregationRule"]
    assert diff_resource({**plain, "rules": []}, plain, (), options).modified
