"""The comparison cache tells argocd-cm's compare options apart, not only the rules'
identity: a comparison made with `ignoreResourceStatusField: none` is not handed out to a
refresh that leaves status out (or lent to it resource by resource), nor the other way
round, even when the caller names the same rules."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import pytest

from headway.controllers.app.refresh import ComparisonCache
from headway.controllers.app.sources import DesiredState
from headway.health import assess, default_registry
from headway.model.argocd_diff import CompareOptions, StatusScope
from headway.model.obj import Obj
from headway.sync.resources import ResourceKey, key_of


def _config_map(phase: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "settings", "namespace": "shop"},
        "data": {},
        "status": {"phase": phase},
    }


DESIRED = DesiredState(objects=(_config_map("ready"),), revisions=("c0ffee",), fingerprint="t1")


def _live(desired: Sequence[Obj]) -> dict[ResourceKey, Obj]:
    """The desired object as applied (tracking marks and all), its status another."""
    obj = copy.deepcopy(dict(desired[0]))
    obj["metadata"].update(uid="uid-settings", resourceVersion="7")
    obj["status"] = {"phase": "pending"}
    return {key_of(obj): obj}


def _sync_status(cache: ComparisonCache, scope: StatusScope) -> str:
    refresh = cache.refresh(
        app="shop",
        namespace="shop",
        desired_state=DESIRED,
        rules=(),
        rules_identity="same rules",
        read_live=_live,
        assess=assess,
        clock_kinds=default_registry().reads_clock,
        options=CompareOptions(ignore_status=scope),
    )
    return refresh.comparison.sync_status


@pytest.mark.parametrize(
    ("first", "then", "expected"),
    [
        (StatusScope.ALL, StatusScope.NONE, "OutOfSync"),
        (StatusScope.NONE, StatusScope.ALL, "Synced"),
    ],
)
def test_other_compare_options_compare_again(
    first: StatusScope, then: StatusScope, expected: str
) -> None:
    assert _sync_status(ComparisonCache(), then) == expected  # each scope alone
    cache = ComparisonCache()
    _sync_status(cache, first)
    assert _sync_status(cache, then) == expected
    assert cache.misses == 2
