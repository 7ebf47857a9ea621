"""Is the target image live and Healthy in an environment? Purely computational.

"Synced" is not success: in a busy repository HEAD moves past the promotion's commit and the
Application reads OutOfSync while running exactly the right image. A promotion is done when
the environment's Application lists the target image in `status.summary.images`, is Healthy,
and every Rollout in it finished its steps on that image (its stable ReplicaSet is its
current one, nothing aborted, analysis passed: a failed analysis aborts). For a change that
does not move the tag, the last synced revision reaching the promotion's commit stands in for
the image. A Rollout aborted on the target image is a failure now, not at the deadline.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from headway.model.obj import Obj

__all__ = ["LiveState", "LiveVerdict", "image_matches", "judge_live", "rollout_images"]


class LiveState(StrEnum):
    WAITING = "Waiting"
    LIVE = "Live"
    FAILED = "Failed"


@dataclass(frozen=True)
class LiveVerdict:
    state: LiveState
    reason: str


def image_matches(image: str, target: str) -> bool:
    """`registry/web:v2` matches the target `registry/web:v2`, `web:v2` or the tag `v2`."""
    if not image or not target:
        return False
    if image == target:
        return True
    if "/" in target or ":" in target or "@" in target:
        return image.endswith("/" + target)
    return image.rsplit("@", 1)[-1] == target or image.rsplit(":", 1)[-1] == target


def rollout_images(rollout: Obj) -> list[str]:
    spec = ((rollout.get("spec") or {}).get("template") or {}).get("spec") or {}
    containers = [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]
    return [str(c.get("image") or "") for c in containers if isinstance(c, dict)]


def _rollout_verdict(rollout: Obj, target: str) -> LiveVerdict | None:
    """None when the Rollout is done on the target image; otherwise why not."""
    name = str((rollout.get("metadata") or {}).get("name"))
    status: dict[str, Any] = rollout.get("status") or {}
    ours = any(image_matches(i, target) for i in rollout_images(rollout))
    if status.get("abort") or status.get("phase") == "Degraded":
        if ours:
            reason = str(status.get("message") or "aborted")
            return LiveVerdict(LiveState.FAILED, f"Rollout {name} aborted: {reason}")
        return LiveVerdict(LiveState.WAITING, f"Rollout {name} is aborted on another image")
    generation = str((rollout.get("metadata") or {}).get("generation") or "")
    if generation and str(status.get("observedGeneration") or "") != generation:
        return LiveVerdict(LiveState.WAITING, f"Rollout {name} has not observed its spec yet")
    current = status.get("currentPodHash")
    if not current or status.get("stableRS") != current:
        step = status.get("currentStepIndex")
        return LiveVerdict(LiveState.WAITING, f"Rollout {name} is at step {step}")
    if status.get("phase") not in (None, "Healthy"):
        return LiveVerdict(LiveState.WAITING, f"Rollout {name} is {status.get('phase')}")
    return None


def judge_live(
    app: Obj,
    rollouts: Sequence[Obj],
    *,
    target: str,
    moves_tag: bool,
    synced_to_commit: bool,
) -> LiveVerdict:
    """The environment's verdict for `target` (an image or tag)."""
    name = str((app.get("metadata") or {}).get("name"))
    status: dict[str, Any] = app.get("status") or {}
    for rollout in rollouts:
        verdict = _rollout_verdict(rollout, target)
        if verdict is not None and verdict.state is LiveState.FAILED:
            return verdict
    if moves_tag:
        images = [str(i) for i in (status.get("summary") or {}).get("images") or []]
        if not any(image_matches(i, target) for i in images):
            return LiveVerdict(LiveState.WAITING, f"Application {name} does not run {target} yet")
    elif not synced_to_commit:
        return LiveVerdict(LiveState.WAITING, f"Application {name} has not synced the commit")
    health = str((status.get("health") or {}).get("status") or "Unknown")
    if health != "Healthy":
        return LiveVerdict(LiveState.WAITING, f"Application {name} is {health}")
    for rollout in rollouts:
        verdict = _rollout_verdict(rollout, target)
        if verdict is not None:
            return verdict
    return LiveVerdict(LiveState.LIVE, f"Application {name} runs {target} and is Healthy")
