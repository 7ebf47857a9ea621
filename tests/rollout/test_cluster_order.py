"""The order a release walks through clusters: canary cluster first, then each group; any
failure aborts every cluster the release reached and syncs nothing more."""

from __future__ import annotations

import pytest

from headway.rollout.cluster_order import (
    ClusterState,
    Order,
    Phase,
    SpecError,
    Stage,
    decide,
    parse_order,
)

ORDER = Order((("canary",), ("eu", "us"), ("ap",)))


def states(**stages: Stage) -> dict[str, ClusterState]:
    every = {name: Stage.WAITING for name in ORDER.applications}
    every.update(stages)
    return {name: ClusterState(name, stage) for name, stage in every.items()}


def test_a_new_release_is_synced_to_the_canary_cluster_only() -> None:
    decision = decide(ORDER, states(), aborted_before=False)
    assert (decision.phase, decision.group, decision.sync) == (Phase.PROGRESSING, 0, ("canary",))
    assert decision.abort == ()


def test_the_next_group_waits_until_the_canary_cluster_is_done() -> None:
    rolling = decide(ORDER, states(canary=Stage.ROLLING), aborted_before=False)
    assert rolling.sync == () and rolling.group == 0
    done = decide(ORDER, states(canary=Stage.DONE), aborted_before=False)
    assert (done.group, done.sync) == (1, ("eu", "us"))


def test_a_group_is_done_only_when_every_member_is() -> None:
    decision = decide(ORDER, states(canary=Stage.DONE, eu=Stage.DONE, us=Stage.ROLLING),
                      aborted_before=False)
    assert (decision.group, decision.sync) == (1, ())
    assert "us (Rolling)" in decision.message


def test_every_group_done_completes() -> None:
    every = {name: Stage.DONE for name in ORDER.applications}
    decision = decide(ORDER, states(**every), aborted_before=False)
    assert decision.phase is Phase.COMPLETED and decision.sync == ()


def test_a_failure_in_the_canary_cluster_aborts_it_and_syncs_no_other() -> None:
    decision = decide(ORDER, states(canary=Stage.FAILED), aborted_before=False)
    assert (decision.phase, decision.sync, decision.abort) == (Phase.ABORTED, (), ("canary",))
    assert decision.message.startswith("the canary cluster failed")


def test_a_failure_in_a_later_group_aborts_every_cluster_reached() -> None:
    decision = decide(ORDER, states(canary=Stage.DONE, eu=Stage.FAILED, us=Stage.ROLLING),
                      aborted_before=False)
    assert decision.phase is Phase.ABORTED and decision.group == 1
    assert decision.abort == ("canary", "eu", "us")  # never "ap": the release never got there


def test_rollouts_aborted_already_are_not_aborted_again() -> None:
    every = states(canary=Stage.DONE, eu=Stage.ROLLING)
    every["eu"] = ClusterState("eu", Stage.FAILED, "analysis failed", aborted=True)
    decision = decide(ORDER, every, aborted_before=False)
    assert decision.abort == ("canary",)


def test_a_cluster_failed_only_by_the_abort_after_done_is_not_blamed() -> None:
    every = states(eu=Stage.FAILED, us=Stage.FAILED)
    every["canary"] = ClusterState("canary", Stage.FAILED, "aborted", aborted=True,
                                   after_done=True)
    decision = decide(ORDER, every, aborted_before=True)
    assert decision.group == 1 and decision.message.startswith("group 1 failed (eu: Failed;")
    alone = decide(ORDER, {**states(), "canary": every["canary"]}, aborted_before=False)
    assert (alone.phase, alone.group, alone.sync) == (Phase.ABORTED, 0, ())


def test_an_abort_sticks_to_the_revision_even_when_the_failure_clears() -> None:
    decision = decide(ORDER, states(canary=Stage.DONE), aborted_before=True)
    assert decision.phase is Phase.ABORTED and decision.sync == ()


def test_a_failure_asks_to_revert_the_release_until_the_revert_is_settled() -> None:
    failed = states(canary=Stage.DONE, eu=Stage.FAILED, us=Stage.ROLLING)
    first = decide(ORDER, failed, aborted_before=False, revision="abc")
    assert (first.phase, first.revert) == (Phase.ABORTED, "abc")
    settled = decide(ORDER, failed, aborted_before=True, revision="abc", reverted=True)
    assert settled.phase is Phase.ABORTED and settled.revert == ""
    cleared = decide(ORDER, states(canary=Stage.DONE), aborted_before=True, revision="abc")
    assert cleared.phase is Phase.ABORTED and cleared.revert == ""  # no failure left to read


@pytest.mark.parametrize(("spec", "field"), [
    ({}, "spec.canary.application"),
    ({"canary": {"application": "a"}, "groups": {}}, "spec.groups"),
    ({"canary": {"application": "a"}, "groups": [{"applications": []}]},
     "spec.groups[0].applications"),
    ({"canary": {"application": "a"}, "groups": [{"applications": ["b", "a"]}]},
     "Application a is listed twice"),
])
def test_a_malformed_spec_names_the_field(spec: dict[str, object], field: str) -> None:
    with pytest.raises(SpecError, match=field.replace("[", r"\[").replace("]", r"\]")):
        parse_order(spec)


def test_the_order_is_the_canary_then_the_groups() -> None:
    spec = {"canary": {"application": "a"}, "groups": [{"applications": ["b", "c"]},
                                                         {"applications": ["d"]}]}
    assert parse_order(spec).groups == (("a",), ("b", "c"), ("d",))
