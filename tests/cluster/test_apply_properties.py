"""Properties of server-side apply over generated configurations."""

from __future__ import annotations

from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from headway.cluster.errors import FieldConflict
from headway.cluster.local.api.apply import ManagedEntry, apply_fields

NOW = "2026-01-01T00:00:00Z"

scalars = st.one_of(st.integers(-3, 3), st.sampled_from(["a", "b", ""]), st.booleans())
keys = st.sampled_from(["p", "q", "r", "s"])
containers = st.lists(
    st.fixed_dictionaries({"name": st.sampled_from(["web", "side", "init"])},
                          optional={"image": st.sampled_from(["x:1", "x:2"]),
                                    "args": st.lists(scalars, max_size=2)}),
    max_size=3, unique_by=lambda c: c["name"],
)
configs = st.recursive(
    st.dictionaries(keys, scalars, max_size=3),
    lambda inner: st.dictionaries(keys, st.one_of(scalars, inner), max_size=3),
    max_leaves=8,
).flatmap(lambda base: st.fixed_dictionaries(
    {"spec": st.just(base)}, optional={"containers": containers,
                                       "finalizers": st.lists(st.sampled_from(["f", "g"]),
                                                              unique=True)}))


def normalized(value: Any) -> Any:
    """Keyed-list order aside (new items are appended), compare as written."""
    if isinstance(value, dict):
        return {k: normalized(v) for k, v in value.items() if v not in ({}, [])}
    if isinstance(value, list) and all(isinstance(i, dict) and "name" in i for i in value):
        return sorted((normalized(i) for i in value), key=lambda i: i["name"])
    if isinstance(value, list) and all(isinstance(i, str) for i in value):
        return sorted(value)
    return value


def run(live: dict[str, Any], managed: tuple[ManagedEntry, ...], applied: dict[str, Any],
        manager: str) -> tuple[dict[str, Any], tuple[ManagedEntry, ...]]:
    outcome = apply_fields(live, managed, applied, manager=manager, force=True,
                           api_version="v1", now=NOW)
    return outcome.content, outcome.managed


@settings(max_examples=80, deadline=None)
@given(configs, configs)
def test_a_sole_manager_gets_exactly_what_it_applied(first: dict[str, Any],
                                                     second: dict[str, Any]) -> None:
    content, managed = run({}, (), first, "git")
    content, _ = run(content, managed, second, "git")
    assert normalized(content) == normalized(second)


@settings(max_examples=80, deadline=None)
@given(configs)
def test_applying_twice_changes_nothing(config: dict[str, Any]) -> None:
    once, managed = run({}, (), config, "git")
    twice, managed_again = run(once, managed, config, "git")
    assert twice == once
    assert {(e.manager, e.fields) for e in managed_again} == {
        (e.manager, e.fields) for e in managed}


@settings(max_examples=100, deadline=None)
@given(configs, configs)
def test_withdrawing_leaves_the_other_managers_fields(mine: dict[str, Any],
                                                      theirs: dict[str, Any]) -> None:
    content, managed = run({}, (), theirs, "ops")
    try:
        outcome = apply_fields(content, managed, mine, manager="git", force=False,
                               api_version="v1", now=NOW)
    except FieldConflict:
        assume(False)
        return
    content, managed = run(outcome.content, outcome.managed, {}, "git")  # git withdraws
    assert normalized(content) == normalized(theirs)
    assert {e.manager for e in managed} <= {"ops", "git"}
    assert any(e.manager == "ops" for e in managed) or normalized(theirs) == {}
