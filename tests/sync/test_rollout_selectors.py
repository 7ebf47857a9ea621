"""An app sync keeps the pod hash a Rollout put into a Service's (atomic) selector."""

from __future__ import annotations

from typing import Any

from headway.sync.rollout_selectors import ROLLOUT_HASH_LABEL, keep_rollout_selector


def service(selector: dict[str, str], kind: str = "Service") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": kind, "metadata": {"name": "web-stable"},
            "spec": {"selector": selector, "ports": [{"port": 80}]}}


def test_the_live_hash_is_carried_into_the_applied_selector() -> None:
    live = service({"app": "web", ROLLOUT_HASH_LABEL: "abc"})
    kept = keep_rollout_selector(service({"app": "web"}), live)
    assert kept["spec"]["selector"] == {"app": "web", ROLLOUT_HASH_LABEL: "abc"}
    assert kept["spec"]["ports"] == [{"port": 80}]


def test_nothing_changes_without_a_hash_for_other_kinds_or_when_git_names_one() -> None:
    desired = service({"app": "web"})
    assert keep_rollout_selector(desired, None) == desired
    assert keep_rollout_selector(desired, service({"app": "web"})) == desired
    other = service({"app": "web"}, kind="ConfigMap")
    assert keep_rollout_selector(other, service({ROLLOUT_HASH_LABEL: "abc"}, "ConfigMap")) == other
    pinned = service({"app": "web", ROLLOUT_HASH_LABEL: "mine"})
    assert keep_rollout_selector(pinned, service({ROLLOUT_HASH_LABEL: "abc"})) == pinned
