"""Normalization: server fields, defaults, stringData, quantities, int/string, merge keys."""

from __future__ import annotations

import base64
import copy
from typing import Any

import pytest

from headway.diff import diff_resource
from headway.diff.defaults import image_pull_policy
from headway.diff.normalize import fold_string_data, strip_server_fields


def deployment(**container: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "api", "namespace": "shop", "labels": {"app": "api"}},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "api"}},
            "template": {
                "metadata": {"labels": {"app": "api"}},
                "spec": {"containers": [{"name": "api", "image": "api:1.2", **container}]},
            },
        },
    }


def as_server_returns(obj: dict[str, Any]) -> dict[str, Any]:
    """What a real API server hands back: server metadata, status and defaults."""
    live = copy.deepcopy(obj)
    live["metadata"].update(
        uid="1c9e",
        resourceVersion="4711",
        generation=3,
        creationTimestamp="2026-01-01T00:00:00Z",
        selfLink="/apis/apps/v1/namespaces/shop/deployments/api",
        managedFields=[{"manager": "kubectl", "operation": "Update", "fieldsV1": {"f:spec": {}}}],
        annotations={
            "deployment.kubernetes.io/revision": "7",
            "kubectl.kubernetes.io/last-applied-configuration": "{}",
        },
    )
    live["status"] = {"replicas": 2, "readyReplicas": 2}
    spec = live["spec"]
    spec.update(
        revisionHistoryLimit=10,
        progressDeadlineSeconds=600,
        strategy={
            "type": "RollingUpdate",
            "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
        },
    )
    pod = spec["template"]["spec"]
    pod.update(restartPolicy="Always", dnsPolicy="ClusterFirst", schedulerName="default-scheduler")
    for c in pod["containers"]:
        c.update(terminationMessagePath="/dev/termination-log", terminationMessagePolicy="File")
        c.setdefault("imagePullPolicy", "IfNotPresent")
    return live


def test_server_written_fields_and_defaults_are_not_drift() -> None:
    desired = deployment()
    result = diff_resource(desired, as_server_returns(desired))
    assert not result.modified, result.diff_lines
    assert result.diff_lines == ()


def test_a_real_change_is_reported_with_a_readable_diff() -> None:
    desired = deployment()
    live = as_server_returns(deployment())
    live["spec"]["template"]["spec"]["containers"][0]["image"] = "api:1.1"
    result = diff_resource(desired, live)
    assert result.modified
    assert "-      - image: api:1.1" in result.diff_lines
    assert "+      - image: api:1.2" in result.diff_lines


def test_desired_spelling_out_defaults_matches_an_undefaulted_live_object() -> None:
    # The local store does not default; the manifest spells the defaults out.
    desired = deployment(
        imagePullPolicy="IfNotPresent",
        terminationMessagePolicy="File",
        ports=[{"containerPort": 8080, "protocol": "TCP"}],
    )
    desired["spec"]["revisionHistoryLimit"] = 10
    desired["spec"]["progressDeadlineSeconds"] = 600
    live = deployment(ports=[{"containerPort": 8080}])
    assert not diff_resource(desired, live).modified
    desired["spec"]["revisionHistoryLimit"] = 3
    assert diff_resource(desired, live).modified


@pytest.mark.parametrize(
    ("image", "policy"),
    [
        ("nginx", "Always"),
        ("nginx:latest", "Always"),
        ("registry:5000/team/nginx", "Always"),
        ("registry:5000/team/nginx:1.25", "IfNotPresent"),
        ("nginx@sha256:abcd", "IfNotPresent"),
    ],
)
def test_image_pull_policy_default_follows_the_tag(image: str, policy: str) -> None:
    assert image_pull_policy(image) == policy


def test_explicit_pull_policy_differing_from_the_tag_default_is_drift() -> None:
    desired = deployment(imagePullPolicy="Always")
    assert diff_resource(desired, deployment()).modified  # live would default to IfNotPresent


def test_service_defaults() -> None:
    desired = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "api"},
        "spec": {
            "type": "ClusterIP",
            "sessionAffinity": "None",
            "ports": [{"port": 80, "targetPort": 80, "protocol": "TCP"}],
        },
    }
    live = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "api"},
        "spec": {"ports": [{"port": 80}], "clusterIP": "10.0.0.7"},
    }
    assert not diff_resource(desired, live).modified
    desired["spec"]["ports"][0]["targetPort"] = 8080
    assert diff_resource(desired, live).modified


def test_string_data_is_folded_into_data() -> None:
    desired = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "db"},
        "stringData": {"password": "hunter2"},
        "data": {"user": base64.b64encode(b"app").decode()},
    }
    live = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "db"},
        "type": "Opaque",
        "data": {"user": "YXBw", "password": base64.b64encode(b"hunter2").decode()},
    }
    assert not diff_resource(desired, live).modified
    live["data"]["password"] = base64.b64encode(b"changed").decode()
    result = diff_resource(desired, live)
    assert result.modified
    text = "\n".join(result.diff_lines)
    assert "hunter2" not in text and "aHVudGVyMg" not in text  # values are masked
    assert "password: ++++++++" in text


@pytest.mark.parametrize(
    ("desired_value", "live_value", "equal"),
    [
        ("1000m", "1", True),
        ("1Gi", "1024Mi", True),
        ("0.5", "500m", True),
        (2, "2", True),
        ("1Gi", "1G", False),
        ("100m", "200m", False),
    ],
)
def test_quantities_compare_canonically(desired_value: Any, live_value: Any, equal: bool) -> None:
    desired = deployment(resources={"limits": {"cpu": desired_value}})
    live = deployment(resources={"limits": {"cpu": live_value}})
    assert diff_resource(desired, live).modified is not equal


def test_int_and_string_forms_compare_equal_outside_quantities_too() -> None:
    desired = deployment(ports=[{"containerPort": "8080"}])
    assert not diff_resource(desired, deployment(ports=[{"containerPort": 8080}])).modified
    flag = deployment(env=[{"name": "DEBUG", "value": "true"}])
    assert diff_resource(flag, deployment(env=[{"name": "DEBUG", "value": "1"}])).modified


def test_merge_keyed_lists_ignore_order_and_extra_live_items() -> None:
    desired = deployment(env=[{"name": "A", "value": "1"}, {"name": "B", "value": "2"}])
    live = deployment(env=[{"name": "B", "value": "2"}, {"name": "A", "value": "1"}])
    sidecar = {"name": "istio-proxy", "image": "proxyv2:1.20"}
    live["spec"]["template"]["spec"]["containers"].append(sidecar)
    assert not diff_resource(desired, live).modified
    live["spec"]["template"]["spec"]["containers"][0]["env"][0]["value"] = "3"
    assert diff_resource(desired, live).modified


def test_positional_lists_compare_exactly() -> None:
    desired = deployment(args=["--port", "80"])
    assert diff_resource(desired, deployment(args=["--port", "80", "--debug"])).modified
    assert diff_resource(desired, deployment(args=["80", "--port"])).modified


def test_missing_live_and_unwanted_live_are_modified() -> None:
    created = diff_resource(deployment(), None)
    assert created.modified and created.normalized_live is None
    assert created.diff_lines[0] == "--- live"
    pruned = diff_resource(None, deployment())
    assert pruned.modified and pruned.normalized_desired is None


def test_fields_removed_from_the_manifest_are_drift_when_last_applied_had_them() -> None:
    import json

    previous = deployment(env=[{"name": "A", "value": "1"}, {"name": "OLD", "value": "x"}])
    previous["spec"]["minReadySeconds"] = 5
    live = copy.deepcopy(previous)
    live["metadata"]["annotations"] = {
        "kubectl.kubernetes.io/last-applied-configuration": json.dumps(previous)
    }
    live["spec"]["template"]["spec"]["containers"].append({"name": "sidecar", "image": "s:1"})
    desired = deployment(env=[{"name": "A", "value": "1"}])
    result = diff_resource(desired, live)
    assert result.modified
    assert "-  minReadySeconds: 5" in result.diff_lines
    assert "-          value: x" in result.diff_lines
    assert not any("sidecar" in line for line in result.diff_lines)  # never applied: kept
    desired["spec"]["minReadySeconds"] = 5
    desired["spec"]["template"]["spec"]["containers"][0]["env"].append(
        {"name": "OLD", "value": "x"}
    )
    assert not diff_resource(desired, live).modified


@pytest.mark.parametrize("kind", ["Deployment", "StatefulSet", "DaemonSet", "Service"])
def test_comparing_leaves_both_objects_as_they_were(kind: str) -> None:
    # Normalization copies only what it changes and shares the rest with its inputs: the
    # desired object is a render-cache entry and the live one a store read, so filling a
    # default or dropping server metadata in place would corrupt later comparisons.
    desired = deployment(ports=[{"containerPort": 8080}])
    desired["kind"] = kind
    desired["spec"]["ports"] = [{"port": 80}]
    desired["metadata"]["annotations"] = {"deployment.kubernetes.io/revision": "3"}
    live = as_server_returns(desired)
    live["spec"]["strategy"] = {"type": "RollingUpdate"}
    live["spec"]["updateStrategy"] = {"type": "RollingUpdate"}
    desired_before, live_before = copy.deepcopy(desired), copy.deepcopy(live)

    diff_resource(desired, live)

    assert desired == desired_before
    assert live == live_before


def test_a_desired_object_with_nothing_to_strip_is_not_copied() -> None:
    """Rendered objects carry no server fields: stripping returned a fresh copy of every one
    on every comparison. One with something to strip is still copied, never changed."""
    desired = deployment()
    assert strip_server_fields(desired) is desired
    assert fold_string_data(desired) is desired
    noted = deployment()
    noted["metadata"]["annotations"] = {"deployment.kubernetes.io/revision": "3"}
    stripped = strip_server_fields(noted)
    assert stripped is not noted and "annotations" not in stripped["metadata"]
    assert noted["metadata"]["annotations"] == {"deployment.kubernetes.io/revision": "3"}
