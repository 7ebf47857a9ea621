"""Hooks: Argo annotations, Helm mapping, delete policies, generated names."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from headway.sync import hooks
from headway.sync.hooks import DeletePolicy, HookType, SyncPhase
from headway.sync.planner import plan_sync
from headway.sync.tasks import Action
from sync.objects import hook, obj

START = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def helm(kind: str, name: str, hook_value: str, **notes: str) -> dict[str, object]:
    return obj(kind, name, annotations={"helm.sh/hook": hook_value, **notes})


@pytest.mark.parametrize(
    ("value", "phases"),
    [
        ("pre-install", (SyncPhase.PRE_SYNC,)),
        ("pre-upgrade", (SyncPhase.PRE_SYNC,)),
        ("post-install,post-upgrade", (SyncPhase.POST_SYNC,)),
        ("pre-install,post-install", (SyncPhase.PRE_SYNC, SyncPhase.POST_SYNC)),
        ("test", ()),
        ("pre-delete", ()),
    ],
)
def test_helm_hooks_map_to_argo_phases(value: str, phases: tuple[SyncPhase, ...]) -> None:
    assert hooks.sync_phases(helm("Job", "j", value)) == phases
    assert hooks.is_hook(helm("Job", "j", value))


def test_helm_crd_install_is_not_a_hook() -> None:
    crd_hook = helm("ConfigMap", "c", "crd-install")
    assert not hooks.is_hook(crd_hook)
    assert hooks.sync_phases(crd_hook) == (SyncPhase.SYNC,)


def test_argo_annotation_wins_over_helm() -> None:
    both = obj(
        "Job",
        "j",
        annotations={"argocd.argoproj.io/hook": "PostSync", "helm.sh/hook": "pre-install"},
    )
    assert hooks.hook_types(both) == (HookType.POST_SYNC,)


def test_skip_is_neither_applied_nor_run() -> None:
    skipped = hook("ConfigMap", "c", "Skip")
    assert hooks.is_skipped(skipped) and not hooks.is_hook(skipped)
    assert plan_sync([skipped], []).tasks == ()


def test_helm_test_hooks_and_post_delete_hooks_stay_out_of_the_sync() -> None:
    test_hook = helm("Pod", "smoke", "test")
    cleanup = hook("Job", "cleanup", "PostDelete")
    plan = plan_sync([test_hook, cleanup, obj("ConfigMap", "c")], [])
    assert [t.key.name for t in plan.tasks] == ["c"]


def test_a_hook_in_several_phases_gets_a_task_per_phase() -> None:
    plan = plan_sync([hook("Job", "check", "PreSync,PostSync")], [])
    assert [(t.phase, t.action) for t in plan.tasks] == [
        (SyncPhase.PRE_SYNC, Action.HOOK),
        (SyncPhase.POST_SYNC, Action.HOOK),
    ]


def test_sync_fail_hooks_only_run_on_failure() -> None:
    plan = plan_sync([hook("Job", "page", "SyncFail"), obj("ConfigMap", "c")], [])
    assert [s.phase for s in plan.waves()] == [SyncPhase.SYNC]
    assert [t.key.name for s in plan.failure_waves() for t in s.tasks] == ["page"]


def test_delete_policies_default_and_helm_mapping() -> None:
    assert hooks.delete_policies(hook("Job", "j", "PreSync")) == {DeletePolicy.BEFORE_HOOK_CREATION}
    argo = hook(
        "Job",
        "j",
        "PreSync",
        annotations={"argocd.argoproj.io/hook-delete-policy": "HookSucceeded,HookFailed"},
    )
    assert hooks.delete_policies(argo) == {DeletePolicy.HOOK_SUCCEEDED, DeletePolicy.HOOK_FAILED}
    helm_hook = helm("Job", "j", "pre-install", **{"helm.sh/hook-delete-policy": "hook-succeeded"})
    assert hooks.delete_policies(helm_hook) == {DeletePolicy.HOOK_SUCCEEDED}


def test_existing_hook_is_deleted_before_creation() -> None:
    migrate = hook("Job", "migrate", "PreSync")
    plan = plan_sync([migrate], [migrate])
    (task,) = plan.tasks
    assert task.delete_before_create
    fresh = plan_sync([migrate], []).tasks[0]
    assert not fresh.delete_before_create


def test_generate_name_hooks_get_argo_cds_stable_name() -> None:
    generated = hook("Job", "", "PreSync")
    generated["metadata"] = {
        "generateName": "migrate-",
        "annotations": generated["metadata"]["annotations"],
        "namespace": "shop",
    }
    plan = plan_sync([generated], [], revision="0123456789abcdef", started_at=START)
    (task,) = plan.tasks
    expected = f"migrate-0123456-presync-{int(START.timestamp())}"
    assert task.key.name == expected
    assert task.target is not None and task.target["metadata"]["name"] == expected
    assert "name" not in generated["metadata"]  # the input is not mutated
    with pytest.raises(ValueError, match="generateName"):
        plan_sync([generated], [])


def test_helm_hook_weight_is_the_wave_when_no_sync_wave() -> None:
    weighted = helm("Job", "j", "pre-install", **{"helm.sh/hook-weight": "-5"})
    both = helm(
        "Job",
        "k",
        "pre-install",
        **{"helm.sh/hook-weight": "-5", "argocd.argoproj.io/sync-wave": "3"},
    )
    plan = plan_sync([weighted, both], [])
    assert {t.key.name: t.wave for t in plan.tasks} == {"j": -5, "k": 3}


def test_skip_hooks_drops_hook_tasks() -> None:
    plan = plan_sync(
        [hook("Job", "migrate", "PreSync"), obj("ConfigMap", "c")], [], skip_hooks=True
    )
    assert [t.key.name for t in plan.tasks] == ["c"]
