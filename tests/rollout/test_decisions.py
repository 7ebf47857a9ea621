"""Pure decision tables: step progression, pause timing, abort, fast-track, rejected kinds,
progress deadline, blue-green auto-promotion. No cluster, no I/O: `decide(ctx) -> Plan`."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from decision_helpers import context, decide_with, mid_update_status, rollout_obj, rs, run

from headway.clock import EPOCH
from headway.kubetime import format_time
from headway.rollout.reconcile import decide, step_hash

STEPS: list[dict[str, Any]] = [
    {"setWeight": 10},
    {"pause": {"duration": "1m"}},
    {"setWeight": 50},
    {"pause": {}},
]


def _mid(index: int, steps: list[dict[str, Any]] = STEPS, **status: Any) -> dict[str, Any]:
    obj = rollout_obj(replicas=3, canary={"steps": steps})
    obj["status"] = mid_update_status(obj, index=index, **status)
    return obj


@pytest.mark.parametrize(
    ("weight", "replicas", "canary", "stable"),
    [(10, 3, 1, 3), (50, 4, 2, 2), (25, 4, 1, 3), (90, 3, 3, 1), (0, 3, 0, 3), (100, 3, 3, 0)],
)
def test_basic_canary_counts_approximate_the_weight(
    weight: int, replicas: int, canary: int, stable: int
) -> None:
    """From all-stable, reconciles (pods ready at once) settle on the approximated split."""
    steps = [{"setWeight": weight}, {"pause": {}}]
    obj = rollout_obj(
        replicas=replicas, canary={"steps": steps, "maxSurge": 1, "maxUnavailable": 0}
    )
    obj["status"] = mid_update_status(obj, index=0)
    counts = {"old": replicas, "new": 0}
    for _ in range(2 * replicas + 2):
        sets = [rs("old", counts["old"], revision=1), rs("new", counts["new"], revision=2)]
        plan = decide_with(obj, sets)
        obj["status"] = plan.status
        after = {h: plan.scales.get(f"web-{h}", n) for h, n in counts.items()}
        if after == counts:
            break
        counts = after
    assert counts == {"new": canary, "old": stable}
    assert obj["status"]["currentStepIndex"] == 1  # the setWeight step completed


def test_set_weight_step_completes_when_counts_are_reached() -> None:
    obj = _mid(0)
    plan = decide_with(obj, [rs("old", 3, revision=1), rs("new", 1, revision=2)])
    assert plan.status["currentStepIndex"] == 1
    assert ("Normal", "RolloutStepCompleted", "Rollout step 1/4 completed (setWeight: 10)") in (
        plan.events
    )


def test_set_weight_step_waits_for_canary_pods() -> None:
    obj = _mid(0)
    plan = decide_with(obj, [rs("old", 3, revision=1), rs("new", 1, revision=2, available=0)])
    assert plan.status["currentStepIndex"] == 0
    assert plan.status["phase"] == "Progressing"


@pytest.mark.parametrize(("elapsed", "index"), [(0, 1), (59, 1), (60, 2), (3600, 2)])
def test_timed_pause(elapsed: int, index: int) -> None:
    start = format_time(EPOCH)
    obj = _mid(
        1, pauseConditions=[{"reason": "CanaryPauseStep", "startTime": start}], controllerPause=True
    )
    sets = [rs("old", 3, revision=1), rs("new", 1, revision=2)]
    plan = decide_with(obj, sets, now=EPOCH + timedelta(seconds=elapsed))
    assert plan.status["currentStepIndex"] == index
    if index == 1:
        assert plan.requeue_after == 60 - elapsed
        assert plan.status["phase"] == "Paused"


def test_pause_without_duration_waits_for_promotion() -> None:
    obj = _mid(3)
    sets = [rs("old", 2, revision=1), rs("new", 2, revision=2)]
    first = decide_with(obj, sets)
    assert first.status["pauseConditions"][0]["reason"] == "CanaryPauseStep"
    assert first.status["controllerPause"] is True
    obj["status"] = first.status
    later = decide_with(obj, sets, now=EPOCH + timedelta(days=30))
    assert later.status["currentStepIndex"] == 3 and later.status["phase"] == "Paused"
    # promote = the pause condition removed, controllerPause still set
    obj["status"] = {**later.status, "pauseConditions": None}
    resumed = decide_with(obj, sets)
    assert resumed.status["currentStepIndex"] == 4
    assert resumed.status["controllerPause"] is False


def test_spec_paused_holds_the_step() -> None:
    obj = _mid(0)
    obj["spec"]["paused"] = True
    plan = decide_with(obj, [rs("old", 3, revision=1), rs("new", 1, revision=2)])
    assert plan.status["currentStepIndex"] == 0
    assert (plan.status["phase"], plan.status["message"]) == ("Paused", "manually paused")


def test_user_abort_scales_canary_down_and_degrades() -> None:
    obj = _mid(2, abort=True)
    plan = decide_with(obj, [rs("old", 2, revision=1), rs("new", 2, revision=2)])
    assert plan.scales["web-new"] < 2  # one step of the way back, within maxSurge
    assert plan.status["phase"] == "Degraded"
    assert plan.status["message"] == "RolloutAborted: Rollout aborted update to revision 2"
    assert plan.status["currentStepIndex"] == 0
    aborted = ("Warning", "RolloutAborted", "Rollout aborted update to revision 2")
    assert aborted in plan.events
    obj["status"] = plan.status  # the next reconcile: the condition is unchanged, no new Event
    again = decide_with(obj, [rs("old", 3, revision=1), rs("new", 1, revision=2)])
    assert [e for e in again.events if e[1] == "RolloutAborted"] == []


@pytest.mark.parametrize("phase", ["Failed", "Error"])
def test_failed_or_error_run_aborts(phase: str) -> None:
    steps = [{"setWeight": 10}, {"analysis": {"templates": [{"templateName": "t"}]}}]
    obj = _mid(1, steps, canary={"currentStepAnalysisRunStatus": {"name": "r1"}})
    template = {"metadata": {"name": "t"}, "spec": {"metrics": []}}
    plan = decide_with(
        obj,
        [rs("old", 3, revision=1), rs("new", 1, revision=2)],
        runs=(run("r1", phase, message='Metric "m" assessed Failed'),),
        templates={("AnalysisTemplate", "t"): template},
    )
    assert plan.status["abort"] is True
    assert "r1" in plan.status["message"] and 'Metric "m"' in plan.status["message"]
    warnings = [e for e in plan.events if e[:2] == ("Warning", "RolloutAborted")]
    assert len(warnings) == 1 and 'Metric "m"' in warnings[0][2]
    assert plan.supersede_runs == ("r1",)
    assert "currentStepAnalysisRunStatus" not in plan.status["canary"]


def test_inconclusive_run_pauses() -> None:
    steps = [{"setWeight": 10}, {"analysis": {"templates": [{"templateName": "t"}]}}]
    obj = _mid(1, steps, canary={"currentStepAnalysisRunStatus": {"name": "r1"}})
    plan = decide_with(
        obj,
        [rs("old", 3, revision=1), rs("new", 1, revision=2)],
        runs=(run("r1", "Inconclusive"),),
        templates={("AnalysisTemplate", "t"): {"spec": {"metrics": []}}},
    )
    assert plan.status["pauseConditions"][0]["reason"] == "InconclusiveAnalysis"
    assert plan.status.get("abort") is not True
    assert plan.status["stableRS"] == "old"


def test_rejected_step_kinds() -> None:
    canary: dict[str, Any] = {"steps": [{"setWeight": 10}, {"plugin": {"name": "x"}}]}
    plan = decide_with(rollout_obj(canary=canary), [rs("new", 0, revision=1)])
    assert plan.status["phase"] == "Degraded"
    assert plan.status["message"].startswith(
        "InvalidSpec: spec.strategy.canary.steps[1].plugin: this step kind is not supported"
    )
    assert plan.scales == {}
    invalid = [c for c in plan.status["conditions"] if c["type"] == "InvalidSpec"]
    assert invalid[0]["status"] == "True" and invalid[0]["reason"] == "InvalidSpec"


def test_refused_step_kind_is_found_beside_another_kind() -> None:
    """A plugin step riding on a setWeight step is refused too, not run as a plain setWeight
    (Argo allows the two in one step; Headway would otherwise drop the plugin silently)."""
    canary: dict[str, Any] = {"steps": [{"setWeight": 10, "plugin": {"name": "x"}}]}
    plan = decide_with(rollout_obj(canary=canary), [rs("new", 0, revision=1)])
    assert "steps[0].plugin: this step kind is not supported" in plan.status["message"]


def test_a_mirror_step_through_a_router_plugin_is_refused() -> None:
    """Argo hands setMirrorRoute to a plugin router, and the Gateway API plugin writes
    nothing: the step would pass with nothing mirrored. Headway refuses it."""
    canary: dict[str, Any] = {
        "stableService": "s",
        "canaryService": "c",
        "trafficRouting": {
            "plugins": {"argoproj-labs/gatewayAPI": {"httpRoute": "r"}},
            "managedRoutes": [{"name": "m"}],
        },
        "steps": [{"setWeight": 10}, {"setMirrorRoute": {"name": "m", "match": [{}]}}],
    }
    plan = decide_with(rollout_obj(canary=canary), [rs("new", 0, revision=1)])
    assert plan.status["message"].startswith(
        "InvalidSpec: spec.strategy.canary.steps[1].setMirrorRoute: mirroring through a "
        "router plugin is not supported by Headway yet (only istio mirrors)"
    )


def test_unsupported_router_is_rejected() -> None:
    canary = {
        "stableService": "s",
        "canaryService": "c",
        "trafficRouting": {"plugins": {"acme/router": {}}},
        "steps": [],
    }
    plan = decide_with(rollout_obj(canary=canary), [rs("new", 0, revision=1)])
    message = plan.status["message"]
    assert 'trafficRouting.plugins["acme/router"]: this traffic router is not supported' in message


def test_new_template_restarts_steps() -> None:
    obj = _mid(3, pauseConditions=[{"reason": "CanaryPauseStep", "startTime": "x"}])
    obj["status"]["currentPodHash"] = "older"
    plan = decide_with(
        obj, [rs("old", 2, revision=1), rs("older", 1, revision=2), rs("new", 0, revision=3)]
    )
    assert plan.status["currentStepIndex"] == 0
    assert plan.status["currentPodHash"] == "new"
    assert "pauseConditions" not in plan.status
    assert plan.scales == {}  # the reset is persisted before anything scales


def test_stable_template_fast_tracks() -> None:
    obj = _mid(2, abort=True)
    obj["status"]["currentPodHash"] = "v2"
    plan = decide_with(obj, [rs("old", 3, revision=3), rs("v2", 1, revision=2)], current="old")
    assert plan.status["currentStepIndex"] == 4
    assert plan.status.get("abort") is False
    assert ("Normal", "SkipSteps", "Rollback to stable ReplicaSets") in plan.events


def test_rollback_window_fast_tracks_recent_revision() -> None:
    obj = _mid(0, stableRS="v3")
    obj["spec"]["rollbackWindow"] = {"revisions": 2}
    obj["status"]["currentPodHash"] = "v3"
    sets = [rs("v2", 0, revision=4, created=10), rs("v3", 3, revision=3, created=20)]
    plan = decide_with(obj, sets, current="v2")
    assert plan.status["currentStepIndex"] == 4
    assert ("Normal", "SkipSteps", "Rollback to active ReplicaSets within RollbackWindow") in (
        plan.events
    )
    obj["status"] = plan.status
    after = decide_with(obj, sets, current="v2")
    assert after.scales["web-v2"] > 0 and after.create_runs == ()


def test_rollback_outside_window_runs_the_steps() -> None:
    obj = _mid(0, stableRS="v3")
    obj["spec"]["rollbackWindow"] = {"revisions": 1}
    obj["status"]["currentPodHash"] = "v3"
    sets = [
        rs("v1", 0, revision=4, created=5),
        rs("v2", 0, revision=2, created=10),
        rs("v3", 3, revision=3, created=20),
    ]
    plan = decide_with(obj, sets, current="v1")
    assert plan.status["currentStepIndex"] == 0


def test_progress_deadline_exceeded_and_abort() -> None:
    updated = format_time(EPOCH)
    progressing = {
        "type": "Progressing",
        "status": "True",
        "reason": "ReplicaSetUpdated",
        "message": "m",
        "lastUpdateTime": updated,
        "lastTransitionTime": updated,
    }
    obj = _mid(0, conditions=[progressing])
    obj["spec"]["progressDeadlineSeconds"] = 60
    sets = [rs("old", 3, revision=1), rs("new", 1, revision=2, available=0)]
    obj["status"]["replicas"], obj["status"]["updatedReplicas"] = 4, 1
    obj["status"]["readyReplicas"] = obj["status"]["availableReplicas"] = 3
    before = decide(context(obj, sets, now=EPOCH + timedelta(seconds=30)))
    assert before.status["phase"] == "Progressing" and before.requeue_after == 30
    after = decide(context(obj, sets, now=EPOCH + timedelta(seconds=61)))
    assert after.status["phase"] == "Degraded"
    assert after.status["message"].startswith("ProgressDeadlineExceeded: ")
    assert after.status.get("abort") is not True
    obj["spec"]["progressDeadlineAbort"] = True
    aborted = decide(context(obj, sets, now=EPOCH + timedelta(seconds=61)))
    assert aborted.status["abort"] is True


def test_blue_green_auto_promotion_seconds() -> None:
    bg = {"activeService": "a", "autoPromotionSeconds": 30}
    status = {"stableRS": "old", "currentPodHash": "new", "blueGreen": {"activeSelector": "old"}}
    obj = rollout_obj(replicas=2, blue_green=bg, status=status)
    sets = [rs("old", 2, revision=1), rs("new", 2, revision=2)]
    first = decide_with(obj, sets)
    assert first.status["pauseConditions"][0]["reason"] == "BlueGreenPause"
    assert first.service_selectors["a"] == "old" and first.requeue_after == 30
    obj["status"] = first.status
    early = decide_with(obj, sets, now=EPOCH + timedelta(seconds=29))
    assert early.service_selectors["a"] == "old"
    late = decide_with(obj, sets, now=EPOCH + timedelta(seconds=30))
    assert late.service_selectors["a"] == "new"
    assert late.status["stableRS"] == "new"


def test_user_abort_clears_pauses_and_retry_progresses_again() -> None:
    start = format_time(EPOCH)
    obj = _mid(
        1,
        abort=True,
        controllerPause=True,
        pauseConditions=[{"reason": "CanaryPauseStep", "startTime": start}],
    )
    sets = [rs("old", 3, revision=1), rs("new", 0, revision=2)]
    aborted = decide_with(obj, sets, now=EPOCH + timedelta(hours=2))
    assert "pauseConditions" not in aborted.status
    assert aborted.status["phase"] == "Degraded"
    obj["status"] = {**aborted.status, "abort": False}  # `rollouts retry`, an hour later
    retried = decide_with(obj, sets, now=EPOCH + timedelta(hours=3))
    assert retried.status["phase"] == "Progressing"
    progressing = next(c for c in retried.status["conditions"] if c["type"] == "Progressing")
    assert progressing["reason"] == "ReplicaSetUpdated"
    assert "abortedAt" not in retried.status


def test_history_limits() -> None:
    obj = rollout_obj(
        replicas=2,
        revisionHistoryLimit=1,
        canary={},
        analysis={"successfulRunHistoryLimit": 1, "unsuccessfulRunHistoryLimit": 0},
    )
    sets = [
        rs("new", 2, revision=4),
        rs("v3", 0, revision=3),
        rs("v2", 0, revision=2),
        rs("v1", 0, revision=1),
    ]
    status = {"stableRS": "new", "currentPodHash": "new", "canary": {}}
    obj["status"] = {**status, "currentStepHash": step_hash(context(obj, sets))}
    runs = (
        run("a", "Successful", kind="Background", step=None, pod_hash="v2", created="1"),
        run("b", "Successful", kind="Background", step=None, pod_hash="v3", created="2"),
        run("c", "Failed", kind="Background", step=None, pod_hash="v3"),
        run("d", "Running", kind="Background", step=None, pod_hash="v3"),
    )
    plan = decide_with(obj, sets, runs=runs)
    assert plan.delete_replica_sets == ("web-v2", "web-v1")
    assert sorted(plan.delete_runs) == ["a", "c"]


def test_subset_routing_runs_and_carries_both_hashes_to_the_router() -> None:
    routing = {
        "istio": {
            "virtualService": {"name": "vs"},
            "destinationRule": {"name": "dr", "canarySubsetName": "c", "stableSubsetName": "s"},
        }
    }
    canary = {"trafficRouting": routing, "steps": [{"setWeight": 50}, {"pause": {}}]}
    obj = rollout_obj(canary=canary)
    obj["status"] = mid_update_status(obj, index=0)
    plan = decide_with(obj, [rs("old", 2, revision=1), rs("new", 2, revision=2)])
    assert "InvalidSpec" not in str(plan.status.get("message"))
    assert plan.traffic is not None
    assert (plan.traffic.canary_hash, plan.traffic.stable_hash) == ("new", "old")
    assert plan.traffic.canary_weight == 50


def test_ping_pong_is_rejected() -> None:
    ping = {
        "pingPong": {"pingService": "a", "pongService": "b"},
        "trafficRouting": {"istio": {"virtualService": {"name": "vs"}}},
    }
    plan = decide_with(rollout_obj(canary=ping), [rs("new", 0, revision=1)])
    assert plan.status["message"].startswith(
        "InvalidSpec: spec.strategy.canary.pingPong: not supported by Headway yet"
    )


def test_blue_green_inconclusive_pre_promotion_pauses_without_switching() -> None:
    bg = {"activeService": "a", "prePromotionAnalysis": {"templates": [{"templateName": "t"}]}}
    status = {
        "stableRS": "old",
        "currentPodHash": "new",
        "blueGreen": {"activeSelector": "old", "prePromotionAnalysisRunStatus": {"name": "r"}},
    }
    obj = rollout_obj(replicas=2, blue_green=bg, status=status)
    plan = decide_with(
        obj,
        [rs("old", 2, revision=1), rs("new", 2, revision=2)],
        runs=(run("r", "Inconclusive", kind="PrePromotion", step=None),),
        templates={("AnalysisTemplate", "t"): {"spec": {"metrics": []}}},
    )
    assert plan.status["pauseConditions"][0]["reason"] == "InconclusiveAnalysis"
    assert plan.service_selectors["a"] == "old" and plan.status["stableRS"] == "old"
