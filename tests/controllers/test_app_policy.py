"""Automated policy: self-heal, retry after a transient failure and the retry budget,
the first-install deadlock message, sync windows and project refusals."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app_harness import (
    APPS_NS,
    Harness,
    application,
    config_map,
    deployment,
    make_harness,
    manifests,
    message,
    phase,
)
from prometheus_client import generate_latest

from headway.clock import VirtualClock


def _synced(s: dict[str, Any]) -> bool:
    return phase(s) == "Succeeded" and s["sync"]["status"] == "Synced"


def test_self_heal_reverts_a_manual_change(tmp_path: Path, clock: VirtualClock) -> None:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("settings"))})
    h.install(application("shop", h.remote.url, path="app", automated={"selfHeal": True}))
    h.run("shop", _synced)
    live = h.get("ConfigMap", "settings")
    h.store.update({**live, "data": {"k": "edited by hand"}}, field_manager="kubectl-edit")
    h.step("shop")
    assert h.status("shop")["sync"]["status"] == "OutOfSync"
    h.run("shop", _synced)
    assert h.get("ConfigMap", "settings")["data"] == {"k": "settings"}
    assert h.status("shop")["history"][-1]["initiatedBy"] == {"automated": True}


def test_without_self_heal_a_manual_change_stays_out_of_sync(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("settings"))})
    h.install(application("shop", h.remote.url, path="app", automated={}))
    h.run("shop", _synced)
    live = h.get("ConfigMap", "settings")
    h.store.update({**live, "data": {"k": "edited"}}, field_manager="kubectl-edit")
    for _ in range(3):
        h.step("shop")
    assert h.status("shop")["sync"]["status"] == "OutOfSync"
    assert h.get("ConfigMap", "settings")["data"] == {"k": "edited"}


def test_retry_after_a_transient_failure_then_succeeds(tmp_path: Path, clock: VirtualClock) -> None:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("settings"))})
    h.install(application("shop", h.remote.url, path="app", namespace="later", automated={}))
    status = h.run("shop", lambda s: phase(s) == "Failed")
    assert "namespace 'later' not found" in message(status)
    h.step("shop")
    assert phase(h.status("shop")) == "Failed"  # the back-off (5 s) has not passed
    h.store.apply(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "later"}},
        field_manager="admin",
    )
    clock.advance(5)
    status = h.run("shop", _synced)
    assert status["operationState"]["retryCount"] == 1
    assert [e["phase"] for e in status["history"]] == ["Failed", "Succeeded"]
    assert [e["retryCount"] for e in status["history"]] == [0, 1]


def test_spent_retry_budget_is_a_sync_error_and_a_metric(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("settings"))})
    retry = {"limit": 2, "backoff": {"duration": "10s", "factor": 2, "maxDuration": "1m"}}
    h.install(
        application(
            "shop", h.remote.url, path="app", namespace="nowhere", automated={}, retry=retry
        )
    )
    left = 'headway_app_sync_retries_left{name="shop",namespace="argocd"}'
    seen = []
    for wait in (0, 10, 20):
        clock.advance(wait)
        h.run("shop", lambda s: phase(s) == "Failed" and len(s.get("history") or []) >= 1)
        h.step("shop")
        text = generate_latest(h.controller.metrics.registry).decode()
        seen.append(next(line for line in text.splitlines() if line.startswith(left)))
    assert [line.split()[-1] for line in seen] == ["2.0", "1.0", "0.0"]
    status = h.run("shop", lambda s: any(c["type"] == "SyncError" for c in s["conditions"]))
    assert len(status["history"]) == 3  # the first attempt and two retries
    error = next(c["message"] for c in status["conditions"] if c["type"] == "SyncError")
    assert "retry budget spent" in error
    text = generate_latest(h.controller.metrics.registry).decode()
    assert 'headway_app_sync_failed_budget_exhausted{name="shop",namespace="argocd"} 1.0' in text
    assert 'sync_status="OutOfSync"' in text
    # Argo CD's counter: the first attempt and two retries, each counted once as it ended.
    synced = [line for line in text.splitlines() if line.startswith("argocd_app_sync_total{")]
    assert len(synced) == 1 and 'phase="Failed"' in synced[0] and 'name="shop"' in synced[0]
    assert synced[0].split()[-1] == "3.0", synced


def test_first_install_deadlock_names_the_hpa_its_wave_and_the_missing_target(
    tmp_path: Path, clock: VirtualClock
) -> None:
    hpa = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "api", "annotations": {"argocd.argoproj.io/sync-wave": "0"}},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "api"},
            "minReplicas": 1,
            "maxReplicas": 3,
        },
    }
    files = {"app/all.yaml": manifests(hpa, deployment("api", wave=1))}
    h = make_harness(tmp_path, clock, files)
    h.install(application("shop", h.remote.url, path="app", automated={}))
    h.run("shop", lambda s: h.exists("HorizontalPodAutoscaler", "api"))
    h.store.patch_status(  # what the HPA controller reports without its target
        "autoscaling/v2",
        "HorizontalPodAutoscaler",
        "api",
        "demo",
        {
            "conditions": [
                {
                    "type": "AbleToScale",
                    "status": "False",
                    "reason": "FailedGetScale",
                    "message": 'deployments/scale.apps "api" not found',
                }
            ]
        },
    )
    status = h.run("shop", lambda s: "waiting" in message(s))
    assert message(status) == (
        "wave 0 waiting: HorizontalPodAutoscaler/api Degraded "
        "(FailedGetScale: deployments/api not found; it is applied in wave 1)"
    )
    assert phase(status) == "Running"
    assert not h.exists("Deployment", "api")


def test_deny_window_refuses_a_manual_sync_with_the_reason(
    tmp_path: Path, clock: VirtualClock
) -> None:
    from app_harness import request_sync

    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("settings"))})
    h.store.apply(
        {
            "apiVersion": "argoproj.io/v1alpha1",
            "kind": "AppProject",
            "metadata": {"name": "default", "namespace": APPS_NS},
            "spec": {
                "sourceRepos": ["*"],
                "destinations": [{"server": "*", "namespace": "*"}],
                "syncWindows": [
                    {
                        "kind": "deny",
                        "schedule": "0 0 * * *",
                        "duration": "2h",
                        "applications": ["*"],
                    }
                ],
            },
        },
        field_manager="admin",
    )
    h.install(application("shop", h.remote.url, path="app"))
    clock.advance(60)
    request_sync(h, "shop")
    status = h.run("shop", lambda s: phase(s) == "Failed")
    assert message(status).startswith("Cannot sync: blocked by deny window")
    assert not h.exists("ConfigMap", "settings")


def test_project_refuses_a_source_repository(tmp_path: Path, clock: VirtualClock) -> None:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("settings"))})
    h.store.apply(
        {
            "apiVersion": "argoproj.io/v1alpha1",
            "kind": "AppProject",
            "metadata": {"name": "team", "namespace": APPS_NS},
            "spec": {
                "sourceRepos": ["https://git.example.com/*"],
                "destinations": [{"server": "*", "namespace": "*"}],
            },
        },
        field_manager="admin",
    )
    h.install(application("shop", h.remote.url, path="app", automated={}, project="team"))
    status = h.run("shop", lambda s: bool(s.get("conditions")))
    assert status["conditions"][0]["type"] == "InvalidSpecError"
    assert "is not permitted (sourceRepos)" in status["conditions"][0]["message"]
    assert status["sync"]["status"] == "Unknown"
    assert not h.exists("ConfigMap", "settings")


def test_orphaned_resource_warning_when_the_project_asks_for_it(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("settings"))})
    project: dict[str, Any] = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "AppProject",
        "metadata": {"name": "default", "namespace": APPS_NS},
        "spec": {
            "sourceRepos": ["*"],
            "destinations": [{"server": "*", "namespace": "*"}],
            "orphanedResources": {"warn": True},
        },
    }
    h.store.apply(project, field_manager="admin")
    stray = {**config_map("stray"), "metadata": {"name": "stray", "namespace": "demo"}}
    h.store.apply(stray, field_manager="someone")
    h.install(application("shop", h.remote.url, path="app", automated={}))
    status = h.run("shop", lambda s: phase(s) == "Succeeded")
    h.step("shop")
    warnings = [c["message"] for c in h.status("shop")["conditions"]]
    assert "Application has 1 orphaned resources (ConfigMap/stray)" in warnings
    project["spec"]["orphanedResources"]["ignore"] = [{"kind": "ConfigMap", "name": "str*"}]
    h.store.apply(project, field_manager="admin")
    h.step("shop")
    status = h.status("shop")
    assert not [c for c in status["conditions"] if c["type"] == "OrphanedResourceWarning"]


def _deny_one_to_two(h: Any, *, overrun: bool) -> None:
    window = {"kind": "deny", "schedule": "0 1 * * *", "duration": "1h", "applications": ["*"]}
    window["syncOverrun"] = overrun
    h.store.apply(
        {
            "apiVersion": "argoproj.io/v1alpha1",
            "kind": "AppProject",
            "metadata": {"name": "default", "namespace": APPS_NS},
            "spec": {
                "sourceRepos": ["*"],
                "destinations": [{"server": "*", "namespace": "*"}],
                "syncWindows": [window],
            },
        },
        field_manager="admin",
    )


def test_a_deny_window_opening_holds_a_running_sync_until_it_closes(
    tmp_path: Path, clock: VirtualClock
) -> None:
    from app_harness import hook_job

    files = {"app/all.yaml": manifests(hook_job("m", "PreSync"), config_map("settings"))}
    h = make_harness(tmp_path, clock, files)
    _deny_one_to_two(h, overrun=False)
    h.install(application("shop", h.remote.url, path="app", automated={}))
    h.run("shop", lambda s: "waiting: Job/m" in message(s))  # started at 00:00, allowed
    clock.advance(3630)  # 01:00:30, inside the deny window
    h.finish_job("m")
    status = h.run("shop", lambda s: "blocked by sync window" in message(s))
    assert message(status).startswith("Sync operation blocked by sync window: blocked by deny")
    h.step("shop")
    assert not h.exists("ConfigMap", "settings")
    clock.advance(3600)  # 02:00:30, the window has closed
    h.run("shop", lambda s: phase(s) == "Succeeded")
    assert h.exists("ConfigMap", "settings")


def test_sync_overrun_lets_a_running_sync_finish_inside_a_deny_window(
    tmp_path: Path, clock: VirtualClock
) -> None:
    from app_harness import hook_job

    files = {"app/all.yaml": manifests(hook_job("m", "PreSync"), config_map("settings"))}
    h = make_harness(tmp_path, clock, files)
    _deny_one_to_two(h, overrun=True)
    h.install(application("shop", h.remote.url, path="app", automated={}))
    h.run("shop", lambda s: "waiting: Job/m" in message(s))
    clock.advance(3630)
    h.finish_job("m")
    h.run("shop", lambda s: phase(s) == "Succeeded")
    assert h.exists("ConfigMap", "settings")


def _harness_with_argocd_cm(
    tmp_path: Path, clock: VirtualClock, files: dict[str, str], settings: dict[str, str]
) -> Harness:
    """A harness whose controller reads its health customizations from an `argocd-cm`
    holding `settings`, as `headway serve` builds it."""
    from headway.controllers.app.controller import ApplicationController
    from headway.controllers.cluster_registry import ClusterRegistry
    from headway.engine import health_registry

    h = make_harness(tmp_path, clock, files)
    argocd_cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "argocd-cm", "namespace": APPS_NS},
        "data": settings,
    }
    h.store.apply(argocd_cm, field_manager="admin")
    h.controller = ApplicationController(
        store=h.store,
        clusters=ClusterRegistry(h.store),
        sources=h.reader,
        clock=clock,
        health=health_registry(h.store, None, clock=clock),
    )
    return h


def test_lua_health_override_from_argocd_cm_gates_the_wave(
    tmp_path: Path, clock: VirtualClock
) -> None:
    script = (
        'hs = {}\nif obj.data and obj.data.ready == "yes" then\n  hs.status = "Healthy"\n'
        'else\n  hs.status = "Progressing"\n  hs.message = "not ready yet"\nend\nreturn hs\n'
    )
    gate = {**config_map("gate", wave=0), "data": {"ready": "no"}}
    files = {"app/all.yaml": manifests(gate, config_map("after", wave=1))}
    h = _harness_with_argocd_cm(
        tmp_path, clock, files, {"resource.customizations.health.ConfigMap": script}
    )
    h.install(application("shop", h.remote.url, path="app", automated={}))
    status = h.run("shop", lambda s: "waiting" in message(s))
    assert message(status) == "wave 0 waiting: ConfigMap/gate Progressing (not ready yet)"
    assert not h.exists("ConfigMap", "after")


def test_runaway_lua_health_script_fails_alone(tmp_path: Path, clock: VirtualClock) -> None:
    """Issue 16.6: a script that backtracked in C for hours hung every reconcile. Now its
    resource is Unknown with the reason, and the controller goes on: the wave reports it."""
    runaway = "string.find(string.rep('a', 3000), '.-.-.-.-.-.-b')\nreturn {status = 'Healthy'}"
    files = {"app/all.yaml": manifests(config_map("gate", wave=0), config_map("after", wave=1))}
    settings = {
        "resource.customizations.health.ConfigMap": runaway,
        "resource.customizations.useOpenLibs.ConfigMap": "true",
    }
    h = _harness_with_argocd_cm(tmp_path, clock, files, settings)
    h.install(application("shop", h.remote.url, path="app", automated={}))
    status = h.run("shop", lambda s: "waiting" in message(s))
    assert message(status) == (
        "wave 0 waiting: ConfigMap/gate Unknown "
        "(health script error: health script exceeded its budget)"
    )
    assert not h.exists("ConfigMap", "after")
