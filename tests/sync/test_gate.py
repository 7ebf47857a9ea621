"""The wave gate, including the first-install HPA/Deployment deadlock message."""

from __future__ import annotations

from typing import Any

from headway.sync.gate import GateVerdict, ends_at_apply, wave_gate
from headway.sync.planner import plan_sync
from headway.sync.resources import ResourceKey, key_of
from sync.objects import hook, obj

GET_SCALE_FAILED = {
    "type": "AbleToScale",
    "status": "False",
    "reason": "FailedGetScale",
    "message": "the HPA controller was unable to get the target's current scale: "
    'deployments/scale.apps "api" not found',
}


def live_map(*objs: dict[str, Any]) -> dict[ResourceKey, dict[str, Any]]:
    return {key_of(o): o for o in objs}


def healthy_deployment(name: str, wave: int) -> dict[str, Any]:
    return obj(
        "Deployment",
        name,
        wave=wave,
        spec={"replicas": 1},
        status={"updatedReplicas": 1, "replicas": 1, "availableReplicas": 1},
    )


def hpa(wave: int, conditions: list[dict[str, str]]) -> dict[str, Any]:
    return obj(
        "HorizontalPodAutoscaler",
        "api",
        wave=wave,
        spec={"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "api"}},
        status={"conditions": conditions},
    )


def test_first_install_deadlock_names_the_later_workload() -> None:
    desired = [obj("Service", "api", wave=0), hpa(0, []), healthy_deployment("api", 1)]
    plan = plan_sync(desired, [])
    wave0 = plan.waves()[0]
    live = live_map(obj("Service", "api", wave=0), hpa(0, [GET_SCALE_FAILED]))
    decision = wave_gate(wave0, plan=plan, live=live)
    assert decision.verdict is GateVerdict.WAIT
    assert decision.deadlocked
    assert decision.message == (
        "wave 0 waiting: HorizontalPodAutoscaler/api Degraded "
        "(FailedGetScale: deployments/api not found; it is applied in wave 1)"
    )


def test_hpa_after_its_workload_passes_the_gate() -> None:
    desired = [healthy_deployment("api", 1), hpa(2, [])]
    plan = plan_sync(desired, [])
    healthy_hpa = hpa(2, [{"type": "AbleToScale", "status": "True", "reason": "ReadyForNewScale"}])
    live = live_map(healthy_deployment("api", 1), healthy_hpa)
    for step in plan.waves():
        assert wave_gate(step, plan=plan, live=live).may_proceed


def test_degraded_resource_fails_the_wave_with_its_message() -> None:
    stuck = obj(
        "Deployment",
        "api",
        spec={"replicas": 2},
        status={"conditions": [{"type": "Progressing", "reason": "ProgressDeadlineExceeded"}]},
    )
    plan = plan_sync([stuck], [])
    decision = wave_gate(plan.waves()[0], plan=plan, live=live_map(stuck))
    assert decision.verdict is GateVerdict.FAIL
    assert decision.message == (
        'wave 0 failed: Deployment/api Degraded (Deployment "api" exceeded its progress deadline)'
    )


def test_not_yet_created_and_progressing_resources_wait() -> None:
    rolling = obj("Deployment", "api", spec={"replicas": 2}, status={"updatedReplicas": 1})
    plan = plan_sync([rolling, obj("Service", "api")], [])
    decision = wave_gate(plan.waves()[0], plan=plan, live=live_map(rolling))
    assert decision.verdict is GateVerdict.WAIT
    assert not decision.deadlocked
    assert decision.message == (
        "wave 0 waiting: Service/api Missing (not created yet), Deployment/api Progressing "
        "(Waiting for rollout to finish: 1 out of 2 new replicas have been updated...)"
    )


def test_resources_without_health_pass_once_created() -> None:
    plan = plan_sync([obj("ConfigMap", "c")], [])
    decision = wave_gate(plan.waves()[0], plan=plan, live=live_map(obj("ConfigMap", "c")))
    assert decision.may_proceed and decision.message == "wave 0 done"


def test_prunes_wait_until_the_object_is_gone() -> None:
    old = obj("ConfigMap", "old")
    plan = plan_sync([], [old])
    step = plan.waves()[0]
    assert (
        wave_gate(step, plan=plan, live=live_map(old)).message
        == "wave 0 waiting: ConfigMap/old Pending deletion"
    )
    assert wave_gate(step, plan=plan, live={}).may_proceed


def test_failed_presync_hook_fails_and_names_the_phase() -> None:
    migrate = hook("Job", "migrate", "PreSync")
    plan = plan_sync([migrate, obj("ConfigMap", "c")], [])
    failed = {
        **migrate,
        "status": {
            "conditions": [{"type": "Failed", "status": "True", "message": "BackoffLimitExceeded"}]
        },
    }
    decision = wave_gate(plan.waves()[0], plan=plan, live=live_map(failed))
    assert decision.verdict is GateVerdict.FAIL
    assert decision.message == "PreSync wave 0 failed: Job/migrate Degraded (BackoffLimitExceeded)"


def test_pdb_before_its_pods_workload_is_explained() -> None:
    pdb = obj(
        "PodDisruptionBudget",
        "api",
        wave=0,
        spec={"minAvailable": 1, "selector": {"matchLabels": {"app": "api"}}},
    )
    deployment = obj(
        "Deployment", "api", wave=2, spec={"template": {"metadata": {"labels": {"app": "api"}}}}
    )
    plan = plan_sync([pdb, deployment], [])

    def pdb_health(o: Any) -> Any:
        from headway.health import HealthResult, HealthStatus

        return HealthResult(HealthStatus.PROGRESSING, "0 of 1 pods available")

    decision = wave_gate(plan.waves()[0], plan=plan, live=live_map(pdb), assess=pdb_health)
    assert decision.deadlocked
    assert decision.message == (
        "wave 0 waiting: PodDisruptionBudget/api Progressing "
        "(0 of 1 pods available: deployments/api not found; it is applied in wave 2)"
    )


def test_prune_awaiting_confirmation_holds_the_wave() -> None:
    ns = obj("Namespace", "team", annotations={"argocd.argoproj.io/sync-options": "Prune=confirm"})
    plan = plan_sync([], [ns])
    decision = wave_gate(plan.waves()[0], plan=plan, live=live_map(ns))
    assert (
        decision.message
        == "wave 0 waiting: Namespace/team prune (waiting for pruning confirmation)"
    )


def test_only_the_last_step_ends_at_apply_and_only_without_hooks() -> None:
    """gitops-engine: the operation succeeds once its last wave is applied, whatever the
    health of what that wave applied; earlier waves, and a last wave with hooks, are judged."""
    paused = obj("Rollout", "web", wave=1)
    plan = plan_sync([obj("ConfigMap", "c", wave=0), paused], [])
    first, last = plan.waves()
    assert not ends_at_apply(first, plan=plan)
    assert ends_at_apply(last, plan=plan)
    with_hook = plan_sync([paused, hook("Job", "smoke", "Sync", wave=1)], [])
    assert not ends_at_apply(with_hook.waves()[-1], plan=with_hook)
    with_post_sync = plan_sync([paused, hook("Job", "smoke", "PostSync")], [])
    sync_step, post_step = with_post_sync.waves()
    assert not ends_at_apply(sync_step, plan=with_post_sync)
    assert not ends_at_apply(post_step, plan=with_post_sync)


def test_a_suspended_resource_holds_an_earlier_wave() -> None:
    """Argo CD keeps a Suspended resource running in a wave that later waves wait for."""
    paused = obj(
        "Deployment", "api", spec={"replicas": 1, "paused": True}, status={"replicas": 1}
    )
    plan = plan_sync([paused, obj("ConfigMap", "after", wave=1)], [])
    decision = wave_gate(plan.waves()[0], plan=plan, live=live_map(paused))
    assert decision.verdict is GateVerdict.WAIT
    assert decision.message.startswith("wave 0 waiting: Deployment/api Suspended")


def test_a_paused_rollout_in_an_earlier_wave_says_what_ends_the_wait() -> None:
    paused = obj(
        "Rollout",
        "web",
        status={"phase": "Paused", "message": "CanaryPauseStep", "observedGeneration": "1"},
    )
    paused["metadata"]["generation"] = 1
    plan = plan_sync([paused, obj("HorizontalPodAutoscaler", "web", wave=1)], [])
    decision = wave_gate(plan.waves()[0], plan=plan, live=live_map(paused))
    assert decision.verdict is GateVerdict.WAIT
    assert decision.message == (
        "wave 0 waiting: Rollout/web Suspended (CanaryPauseStep; the next waves start once it "
        "is promoted or its pause ends)"
    )
