"""ConfigMap and Secret payloads: the API server refuses values it cannot decode."""

from __future__ import annotations

import re
from typing import Any

import pytest

from headway.cluster.errors import Invalid, NotFound
from headway.cluster.protocol import Cluster
from headway.model.obj import Obj


def _object(kind: str, **payload: Any) -> Obj:
    return {"apiVersion": "v1", "kind": kind, "metadata": {"name": "settings"}, **payload}


@pytest.mark.parametrize(
    ("kind", "payload", "message"),
    [
        ("ConfigMap", {"data": {"a": 1}}, "ConfigMap settings: data['a']: value must be a "
         "string, got integer 1"),
        ("ConfigMap", {"data": {"on": True}}, "data['on']: value must be a string, got boolean"),
        ("ConfigMap", {"data": {"a": None}}, "data['a']: value must be a string, got null"),
        ("ConfigMap", {"data": {"a": {"b": "c"}}}, "data['a']: value must be a string, got a "
         "mapping"),
        ("ConfigMap", {"data": ["a"]}, "ConfigMap settings: data: must be a mapping"),
        ("ConfigMap", {"binaryData": {"logo": "not base64!"}}, "binaryData['logo']: value is "
         "not valid base64"),
        ("ConfigMap", {"binaryData": {"logo": 5}}, "binaryData['logo']: value must be base64"),
        ("ConfigMap", {"data": {"k": "x"}, "binaryData": {"k": "eA=="}}, "binaryData['k']: "
         "the key is also in data"),
        ("ConfigMap", {"data": {"bad key": "x"}}, "data['bad key']: a key is"),
        ("ConfigMap", {"data": {"..hidden": "x"}}, "data['..hidden']: a key may not"),
        ("Secret", {"data": {"password": "hunter2"}}, "Secret settings: data['password']: "
         "value is not valid base64"),
        ("Secret", {"data": {"password": "YQ"}}, "data['password']: value is not valid base64"),
        ("Secret", {"data": {"password": 12}}, "data['password']: value must be base64 text, "
         "got integer 12"),
        ("Secret", {"stringData": {"port": 5432}}, "stringData['port']: value must be a "
         "string, got integer 5432"),
    ],
)
def test_undecodable_payload_is_invalid_and_not_stored(
    cluster: Cluster, kind: str, payload: dict[str, Any], message: str
) -> None:
    with pytest.raises(Invalid, match=re.escape(message)):
        cluster.apply(_object(kind, **payload), field_manager="test")
    with pytest.raises(NotFound):
        cluster.get("v1", kind, "settings", "default")


@pytest.mark.parametrize(
    ("kind", "payload"),
    [
        ("ConfigMap", {"data": {"a": "1", "log.level": "debug", "KEY_NAME": ""}}),
        ("ConfigMap", {"binaryData": {"logo.png": "iVBORw0KGgo="}, "data": {"x": "y"}}),
        ("Secret", {"data": {"password": "aHVudGVyMg==", "multi": "YWJj\nZA=="}}),
        ("Secret", {"data": {"empty": ""}, "stringData": {"user": "admin"}}),
    ],
)
def test_decodable_payload_is_stored_as_written(
    cluster: Cluster, kind: str, payload: dict[str, Any]
) -> None:
    stored = cluster.apply(_object(kind, **payload), field_manager="test")
    for field, values in payload.items():
        assert stored[field] == values


def test_a_bad_value_cannot_be_applied_over_a_good_object(cluster: Cluster) -> None:
    cluster.apply(_object("ConfigMap", data={"a": "1"}), field_manager="test")
    with pytest.raises(Invalid, match=re.escape("data['a']")):
        cluster.apply(_object("ConfigMap", data={"a": 1}), field_manager="test")
    assert cluster.get("v1", "ConfigMap", "settings", "default")["data"] == {"a": "1"}
