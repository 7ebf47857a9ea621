"""Success is "live and Healthy": the target image in status.summary.images, the Application
Healthy, every Rollout done on it; an abort on the target image fails at once."""

from __future__ import annotations

from typing import Any

from headway.promotion.live import LiveState, image_matches, judge_live


def _app(images: list[str], health: str = "Healthy") -> dict[str, Any]:
    return {
        "metadata": {"name": "web-staging"},
        "status": {"summary": {"images": images}, "health": {"status": health}},
    }


def _rollout(image: str, **status: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "web", "generation": 2},
        "spec": {"template": {"spec": {"containers": [{"name": "web", "image": image}]}}},
        "status": {"observedGeneration": "2", **status},
    }


def test_image_matching_by_tag_or_reference() -> None:
    assert image_matches("registry.local/web:v2", "v2")
    assert image_matches("registry.local/web:v2", "web:v2")
    assert not image_matches("registry.local/web:v21", "v2")
    assert not image_matches("registry.local/web:v2", "api:v2")


def test_synced_and_healthy_on_the_old_image_is_not_success() -> None:
    verdict = judge_live(_app(["web:v1"]), [], target="v2", moves_tag=True, synced_to_commit=True)
    assert verdict.state is LiveState.WAITING


def test_healthy_with_the_image_and_a_finished_rollout_is_live() -> None:
    done = _rollout("web:v2", currentPodHash="h2", stableRS="h2", phase="Healthy")
    verdict = judge_live(
        _app(["web:v2"]), [done], target="v2", moves_tag=True, synced_to_commit=False
    )
    assert verdict.state is LiveState.LIVE


def test_a_rollout_mid_steps_keeps_it_waiting() -> None:
    midway = _rollout("web:v2", currentPodHash="h2", stableRS="h1", currentStepIndex=1)
    verdict = judge_live(
        _app(["web:v1", "web:v2"]), [midway], target="v2", moves_tag=True, synced_to_commit=True
    )
    assert verdict.state is LiveState.WAITING and "step 1" in verdict.reason


def test_an_abort_on_the_target_image_fails_at_once() -> None:
    aborted = _rollout("web:v2", abort=True, phase="Degraded", message="analysis failed")
    verdict = judge_live(
        _app(["web:v1"], "Degraded"),
        [aborted],
        target="v2",
        moves_tag=True,
        synced_to_commit=True,
    )
    assert verdict.state is LiveState.FAILED and "analysis failed" in verdict.reason


def test_a_change_that_keeps_the_tag_waits_for_the_synced_revision() -> None:
    app = _app(["web:v2"])
    assert judge_live(app, [], target="v2", moves_tag=False, synced_to_commit=False).state is (
        LiveState.WAITING
    )
    assert judge_live(app, [], target="v2", moves_tag=False, synced_to_commit=True).state is (
        LiveState.LIVE
    )
