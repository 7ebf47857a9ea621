"""The Application controller over the store only: waves, hooks, prune, status."""

from __future__ import annotations

from pathlib import Path

from app_harness import application, config_map, deployment, make_harness, manifests

from headway.clock import VirtualClock


def test_automated_sync_applies_waves_in_order_gated_on_health(
    tmp_path: Path, clock: VirtualClock
) -> None:
    files = {"app/all.yaml": manifests(deployment("db", wave=0), config_map("web-config", wave=1))}
    h = make_harness(tmp_path, clock, files)
    h.install(application("shop", h.remote.url, path="app", automated={"prune": True}))
    state = h.run(
        "shop", lambda s: "waiting" in str((s.get("operationState") or {}).get("message"))
    )
    assert state["operationState"]["phase"] == "Running"
    assert state["operationState"]["message"].startswith(
        "wave 0 waiting: Deployment/db Progressing"
    )
    assert not h.exists("ConfigMap", "web-config")
    h.make_ready("db")
    state = h.run("shop", lambda s: s["operationState"]["phase"] == "Succeeded")
    assert h.exists("ConfigMap", "web-config")
    assert state["sync"]["status"] == "Synced"
    assert state["health"]["status"] == "Healthy"
    assert [e["phase"] for e in state["history"]] == ["Succeeded"]


def test_app_of_apps_a_root_application_in_git_brings_its_children(
    tmp_path: Path, clock: VirtualClock
) -> None:
    from app_harness import APPS_NS, phase

    h = make_harness(tmp_path, clock, {"child/cm.yaml": manifests(config_map("from-child"))})
    child = application("child", h.remote.url, path="child", automated={})
    h.remote.commit({"apps/child.yaml": manifests(child)})
    root = application("root", h.remote.url, path="apps", namespace=APPS_NS, automated={})
    h.install(root)
    h.run("root", lambda s: h.exists("Application", "child", APPS_NS) or phase(s) == "Failed")
    h.run("child", lambda s: phase(s) == "Succeeded")
    assert h.exists("ConfigMap", "from-child")
    status = h.run("root", lambda s: s["health"]["status"] == "Healthy")
    assert [r["kind"] for r in status["resources"]] == ["Application"]
