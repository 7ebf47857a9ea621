"""Container environments: values, references, ConfigMaps and Secrets."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from headway.cluster.local.kubelet.podenv import (
    EnvConfigError,
    expand_references,
    resolve_container_env,
)

POD = {"metadata": {"name": "web-abc", "namespace": "shop", "uid": "u-1", "labels": {"app": "web"}}}
OBJECTS: dict[tuple[str, str], dict[str, Any]] = {
    ("ConfigMap", "settings"): {"data": {"MODE": "fast", "LEVEL": "3"}},
    ("Secret", "creds"): {"data": {"TOKEN": base64.b64encode(b"s3cret").decode()}},
}


def lookup(kind: str, name: str) -> dict[str, Any] | None:
    return OBJECTS.get((kind, name))


def test_every_source_in_kubernetes_order() -> None:
    container = {
        "envFrom": [
            {"configMapRef": {"name": "settings"}, "prefix": "CFG_"},
            {"secretRef": {"name": "creds"}},
        ],
        "env": [
            {"name": "GREETING", "value": "hello"},
            {"name": "MESSAGE", "value": "$(GREETING) from $(POD) at $$(LITERAL)"},
            {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
            {"name": "NS", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
            {"name": "APP", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['app']"}}},
            {"name": "IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
            {"name": "MODE", "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "MODE"}}},
            {"name": "SECRET", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "TOKEN"}}},
            {
                "name": "MAYBE",
                "valueFrom": {"configMapKeyRef": {"name": "absent", "key": "x", "optional": True}},
            },
        ],
    }
    env = resolve_container_env(POD, container, lookup)
    assert env["CFG_MODE"] == "fast" and env["CFG_LEVEL"] == "3"
    assert env["TOKEN"] == "s3cret"
    # POD is defined after MESSAGE, so the reference stays as written (as on Kubernetes)
    assert env["MESSAGE"] == "hello from $(POD) at $(LITERAL)"
    assert (env["POD"], env["NS"], env["APP"], env["IP"]) == ("web-abc", "shop", "web", "127.0.0.1")
    assert env["MODE"] == "fast" and env["SECRET"] == "s3cret"
    assert "MAYBE" not in env


@pytest.mark.parametrize(
    ("container", "message"),
    [
        ({"envFrom": [{"configMapRef": {"name": "absent"}}]}, 'configmap "absent" not found'),
        (
            {
                "env": [
                    {"name": "X", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "NOPE"}}}
                ]
            },
            "couldn't find key NOPE in Secret creds",
        ),
        (
            {"env": [{"name": "X", "valueFrom": {"fieldRef": {"fieldPath": "spec.nope"}}}]},
            'unsupported fieldRef fieldPath "spec.nope"',
        ),
    ],
)
def test_missing_references_are_config_errors(container: dict[str, Any], message: str) -> None:
    with pytest.raises(EnvConfigError, match=message):
        resolve_container_env(POD, container, lookup)


def test_expand_references() -> None:
    assert expand_references("$(A)-$(B)-$$(A)", {"A": "1"}) == "1-$(B)-$(A)"
