"""The PreDelete step decision (`sync.delete_hooks`), one case per state of a live hook."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from headway.health import HealthResult, HealthStatus
from headway.sync.delete_hooks import (
    FINGERPRINT_ANNOTATION,
    RUN_ANNOTATION,
    DeleteHookPlan,
    plan_delete_hooks,
    stamp_for_run,
)
from headway.sync.hooks import HookType
from headway.sync.resources import key_of

DELETED_AT = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def _job(name: str, hook: str = "PreDelete", image: str = "tool:1") -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": "demo",
            "annotations": {"argocd.argoproj.io/hook": hook},
        },
        "spec": {"template": {"spec": {"containers": [{"name": "m", "image": image}]}}},
    }


def _plan(
    rendered: list[dict[str, Any]],
    *live: dict[str, Any],
    health: str = "",
    hook_type: HookType = HookType.PRE_DELETE,
) -> DeleteHookPlan:
    def assess(_obj: dict[str, Any]) -> HealthResult | None:
        return HealthResult(HealthStatus(health), "boom") if health else None

    return plan_delete_hooks(
        rendered,
        {key_of(o): o for o in live},
        hook_type=hook_type,
        deleted_at=DELETED_AT,
        key_of=key_of,
        assess=assess,
    )


def test_only_pre_delete_hooks_are_created_stamped_with_the_run() -> None:
    plan = _plan([_job("teardown"), _job("migrate", "PreSync"), _job("both", "PreSync,PreDelete")])
    assert [o["metadata"]["name"] for o in plan.create] == ["teardown", "both"]
    notes = plan.create[0]["metadata"]["annotations"]
    assert notes[RUN_ANNOTATION] == str(int(DELETED_AT.timestamp()))
    assert not plan.done


def test_a_live_hook_of_an_earlier_run_is_deleted_before_this_run_creates_it() -> None:
    synced = _job("both", "PreSync,PreDelete")  # left by a sync's PreSync run: no run stamp
    plan = _plan([_job("both", "PreSync,PreDelete")], synced, health="Healthy")
    assert plan.delete == (synced,) and plan.create == () and not plan.done


def test_this_runs_hook_is_waited_for_then_done() -> None:
    live = stamp_for_run(_job("teardown"), deleted_at=DELETED_AT)
    assert _plan([_job("teardown")], live, health="Progressing").running == (
        "batch/Job/demo/teardown (Progressing (boom))",
    )
    assert _plan([_job("teardown")], live, health="Healthy").done
    assert _plan([_job("teardown")], live).done  # no health check for the kind: Healthy


def test_a_failed_hook_fails_until_git_renders_a_different_one() -> None:
    live = stamp_for_run(_job("teardown"), deleted_at=DELETED_AT)
    same = _plan([_job("teardown")], live, health="Degraded")
    assert same.failed == ("batch/Job/demo/teardown: boom",) and same.delete == ()
    fixed = _plan([_job("teardown", image="tool:2")], live, health="Degraded")
    assert fixed.delete == (live,) and fixed.failed == ()


def test_a_failed_hook_no_longer_in_git_does_not_block() -> None:
    live = stamp_for_run(_job("teardown"), deleted_at=DELETED_AT)
    assert _plan([], live, health="Degraded").done


def test_the_fingerprint_ignores_the_stamps() -> None:
    once = stamp_for_run(_job("teardown"), deleted_at=DELETED_AT)
    twice = stamp_for_run(once, deleted_at=DELETED_AT)
    assert (
        once["metadata"]["annotations"][FINGERPRINT_ANNOTATION]
        == (twice["metadata"]["annotations"][FINGERPRINT_ANNOTATION])
    )


def test_post_delete_hooks_are_planned_apart_from_pre_delete_ones() -> None:
    rendered = [
        _job("teardown"),
        _job("notify", "PostDelete"),
        _job("both", "PreDelete,PostDelete"),
    ]
    post = _plan(rendered, hook_type=HookType.POST_DELETE)
    assert [o["metadata"]["name"] for o in post.create] == ["notify", "both"]
    unnamed = _job("x", "PostDelete")
    unnamed["metadata"]["generateName"] = unnamed["metadata"].pop("name")
    (created,) = _plan([unnamed], hook_type=HookType.POST_DELETE).create
    assert created["metadata"]["name"] == f"xpostdelete-{int(DELETED_AT.timestamp())}"


@pytest.mark.parametrize("health", ["Suspended", "Missing", "Unknown", "Progressing"])
def test_a_hook_neither_healthy_nor_degraded_is_waited_for(health: str) -> None:
    """Argo CD waits only for a Progressing hook: a Suspended, Missing or Unknown one counts
    as done and the resources are deleted. Headway waits until the hook is Healthy."""
    live = stamp_for_run(_job("teardown"), deleted_at=DELETED_AT)
    plan = _plan([_job("teardown")], live, health=health)
    assert plan.running == (f"batch/Job/demo/teardown ({health} (boom))",)
    assert not plan.done
