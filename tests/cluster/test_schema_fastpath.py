"""The compiled fast check may only skip work: whatever it passes, the full validator
passes too; and it does pass ordinary valid objects (or it would save nothing)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from headway.cluster.local.api.schema_fastpath import compile_check
from headway.cluster.local.api.schemas import builtin_check

POD: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "web", "labels": {"app": "web"}, "annotations": {"a/b": "c"}},
    "spec": {
        "restartPolicy": "Always",
        "terminationGracePeriodSeconds": 30,
        "containers": [{
            "name": "main", "image": "web:1", "command": ["python", "-m", "http.server"],
            "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
            "env": [{"name": "A", "value": "1"},
                    {"name": "B", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
            "readinessProbe": {"httpGet": {"path": "/", "port": "http"}, "periodSeconds": 1},
            "resources": {"limits": {"cpu": "500m", "memory": 1.5}},
        }],
    },
}


def test_ordinary_valid_objects_take_the_fast_path() -> None:
    check = builtin_check("v1", "Pod")
    assert check is not None and check.certainly_valid(POD)


# Values of every JSON type, to put where the schema expects something else.
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats(allow_nan=False)
    | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=3), inner,
                                                                 max_size=2),
    max_leaves=4,
)
PATHS = [
    ("spec", "containers"), ("spec", "containers", 0, "ports", 0, "containerPort"),
    ("spec", "containers", 0, "readinessProbe", "httpGet", "port"),
    ("spec", "containers", 0, "resources", "limits", "cpu"), ("spec", "restartPolicy"),
    ("metadata", "labels"), ("spec", "containers", 0, "env", 1, "valueFrom"),
    ("spec", "containers", 0, "unknownField"), ("spec", "hostNetwork"), ("kind",),
]


@settings(max_examples=150, deadline=None)
@given(where=st.sampled_from(PATHS), value=json_values)
def test_what_the_fast_path_passes_the_full_validator_passes(
    where: tuple[str | int, ...], value: Any
) -> None:
    check = builtin_check("v1", "Pod")
    assert check is not None
    pod = copy.deepcopy(POD)
    node: Any = pod
    for part in where[:-1]:
        node = node[part]
    node[where[-1]] = value
    if check.certainly_valid(pod):  # then only what the store does not check may be found
        assert all(e.validator == "required" for e in check.validator.iter_errors(pod))


@pytest.mark.parametrize("schema", [
    {"type": "string", "pattern": "^a"},  # a keyword it does not know
    {"type": "uuid"},  # a type it does not know
    {"$ref": "#/$defs/Missing"},
])
def test_what_it_does_not_understand_it_is_never_sure_of(schema: dict[str, Any]) -> None:
    assert compile_check(schema, {})("abc") is False


def test_recursive_definitions_compile_and_check() -> None:
    definitions = {"Tree": {"type": "object", "additionalProperties": False,
                            "properties": {"children": {"type": "array",
                                                        "items": {"$ref": "#/$defs/Tree"}}}}}
    check = compile_check({"$ref": "#/$defs/Tree"}, definitions)
    assert check({"children": [{"children": []}, {}]})
    assert not check({"children": [{"leaf": 1}]})
