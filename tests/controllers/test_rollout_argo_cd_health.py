"""Argo CD's own Rollout health script reads the statuses Headway's controller writes.

The script is `resource_customizations/argoproj.io/Rollout/health.lua` of an Argo CD
checkout (`HEADWAY_ARGO_CD_DIR`, default `/tmp/argo-cd`, as `scripts/conformance` takes it;
nothing of it is copied here). Each state is produced by the controller on a real
LocalCluster and read twice: as written (Argo CD >= 1.8 surfaces `phase`/`message`), and
with `phase`/`message` removed, which makes the script take its older path through
`conditions`, `pauseConditions`, `currentPodHash`, the replica counters and `stableRS`.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

import pytest
from rollout_harness import Harness, rollout, service

from headway.clock import VirtualClock
from headway.health.lua_script import LuaHealthScript

STEPS = [{"setWeight": 25}, {"pause": {}}]
_SCRIPT = Path("resource_customizations/argoproj.io/Rollout/health.lua")


@pytest.fixture(scope="module")
def argo_health() -> LuaHealthScript:
    root = Path(os.environ.get("HEADWAY_ARGO_CD_DIR", "/tmp/argo-cd"))
    path = root / _SCRIPT
    if not path.is_file():
        pytest.skip(f"no Argo CD checkout with {_SCRIPT} at {root} (set HEADWAY_ARGO_CD_DIR)")
    return LuaHealthScript(path.read_text(encoding="utf-8"), str(path), open_libs=True)


def _read(script: LuaHealthScript, obj: dict[str, Any]) -> tuple[str, str]:
    result = script.assess(obj)
    assert result is not None
    return str(result.status), result.message


def _both_paths(script: LuaHealthScript, obj: dict[str, Any]) -> tuple[str, str]:
    """The verdict on the status as written; the older path must agree on the status."""
    written = _read(script, obj)
    older = copy.deepcopy(obj)
    older["status"].pop("phase", None)
    older["status"].pop("message", None)
    assert _read(script, older)[0] == written[0], (older["status"], written)
    return written


def test_canary_states(tmp_path: Path, clock: VirtualClock, argo_health: LuaHealthScript) -> None:
    h = Harness(tmp_path, clock)
    h.apply(rollout(canary={"steps": STEPS}))
    h.settle()
    assert _both_paths(argo_health, h.get()) == ("Healthy", "")
    h.apply(rollout(image="app:v2", canary={"steps": STEPS}))
    # the spec changed and the controller has not looked yet
    assert _read(argo_health, h.get()) == (
        "Progressing", "Waiting for rollout spec update to be observed")
    h.settle()
    assert _both_paths(argo_health, h.get()) == ("Suspended", "CanaryPauseStep")
    h.patch_status({"abort": True})
    h.settle()
    status, message = _both_paths(argo_health, h.get())
    assert status == "Degraded" and message.startswith("RolloutAborted: "), message
    h.apply(rollout(image="app:v3", canary={"steps": STEPS}))
    h.step()  # the v3 ReplicaSet exists; its pods never become available
    h.unavailable.add(f"web-{h.status()['currentPodHash']}")
    h.settle()
    assert _both_paths(argo_health, h.get())[0] == "Progressing"
    h.unavailable.clear()
    h.settle()
    h.patch_status({"pauseConditions": None})
    h.settle()
    assert _both_paths(argo_health, h.get()) == ("Healthy", "")


def test_invalid_spec_is_degraded(
    tmp_path: Path, clock: VirtualClock, argo_health: LuaHealthScript
) -> None:
    h = Harness(tmp_path, clock)
    h.apply(rollout(canary={"steps": [{"plugin": {"name": "x"}}]}))
    h.settle()
    status, message = _both_paths(argo_health, h.get())
    assert status == "Degraded" and message.startswith("InvalidSpec: "), message


def test_blue_green_states(
    tmp_path: Path, clock: VirtualClock, argo_health: LuaHealthScript
) -> None:
    h = Harness(tmp_path, clock)
    h.apply(service("active"))
    h.apply(service("preview"))
    strategy = {"activeService": "active", "previewService": "preview",
                "autoPromotionEnabled": False}
    h.apply(rollout(blue_green=strategy))
    h.settle()
    assert _both_paths(argo_health, h.get()) == ("Healthy", "")
    h.apply(rollout(image="app:v2", blue_green=strategy))
    h.settle()
    assert _both_paths(argo_health, h.get()) == ("Suspended", "BlueGreenPause")
    h.patch_status({"pauseConditions": None})
    h.settle()
    assert _both_paths(argo_health, h.get()) == ("Healthy", "")


def test_a_workload_ref_edit_waits_to_be_observed(
    tmp_path: Path, clock: VirtualClock, argo_health: LuaHealthScript
) -> None:
    from test_rollout_workload_ref import deployment, referencing

    h = Harness(tmp_path, clock)
    h.apply(deployment())
    h.apply(referencing("onsuccess"))
    h.settle()
    assert _both_paths(argo_health, h.get()) == ("Healthy", "")
    h.apply(deployment(image="app:v2", replicas=0))
    h.settle()
    assert _both_paths(argo_health, h.get()) == ("Suspended", "CanaryPauseStep")
    # an edit the controller has not seen: the generation annotation moved (as Argo's
    # informer writes it), the status did not
    h.apply(deployment(image="app:v3", replicas=0))
    h.apply({**h.get(), "metadata": {**h.get()["metadata"], "annotations": {
        "rollout.argoproj.io/workload-generation": "99"}}})
    assert _read(argo_health, h.get()) == (
        "Progressing", "Waiting for rollout spec update to be observed")
