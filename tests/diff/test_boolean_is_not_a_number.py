"""A desired `true` and a live `1` (or `false` and `0`) differ: Python's `True == 1` must not
make the comparison call a resource in sync when a field holds the wrong type live."""

from __future__ import annotations

from typing import Any

import pytest

from headway.diff.compare import diff_resource, same_values


def _config(value: Any) -> dict[str, Any]:
    return {
        "apiVersion": "example.dev/v1",
        "kind": "Feature",
        "metadata": {"name": "flags", "namespace": "shop"},
        "spec": {"enabled": value, "rollout": {"sticky": value}},
    }


@pytest.mark.parametrize(("desired", "live"), [(True, 1), (False, 0), (1, True), (0, False)])
def test_a_boolean_against_a_number_is_a_difference(desired: Any, live: Any) -> None:
    result = diff_resource(_config(desired), _config(live))
    assert result.modified


@pytest.mark.parametrize(("desired", "live"), [(True, True), (1, 1), (1, "1"), (False, False)])
def test_equal_values_and_an_int_with_its_decimal_string_stay_in_sync(
    desired: Any, live: Any
) -> None:
    assert not diff_resource(_config(desired), _config(live)).modified


def test_same_values_tells_booleans_from_numbers_at_any_depth() -> None:
    assert same_values({"a": [1, {"b": True}]}, {"a": [1, {"b": True}]})
    assert not same_values({"a": [1, {"b": True}]}, {"a": [1, {"b": 1}]})
    assert not same_values([0], [False])
    assert not same_values({"a": 1}, {"a": 1, "b": 2})
