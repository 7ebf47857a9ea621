"""`headway app create | set | delete | wait | manifests` as Argo CD users script them, with
the controller run in-process between commands (and between a wait's polls)."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_harness import APPS_NS, Harness, config_map, deployment, make_harness, manifests, phase
from typer.testing import CliRunner

from headway.cli import app_edit
from headway.cli.main import _register_all, app
from headway.clock import VirtualClock
from headway.controllers.app.deletion import RESOURCES_FINALIZER

_register_all()
runner = CliRunner()


def cli(tmp_path: Path, *args: str, stdin: str | None = None) -> tuple[int, str]:
    result = runner.invoke(app, ["app", *args, "--state-dir", str(tmp_path / "state")], input=stdin)
    return result.exit_code, result.output


def create_shop(h: Harness, tmp_path: Path, *extra: str) -> tuple[int, str]:
    return cli(
        tmp_path, "create", "shop", "--repo", h.remote.url, "--path", "app", "--revision",
        "main", "--dest-server", "https://kubernetes.default.svc", "--dest-namespace", "demo",
        *extra,
    )


def test_create_writes_the_application_argocd_would(tmp_path: Path, clock: VirtualClock) -> None:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("a"))})
    code, out = create_shop(h, tmp_path, "--sync-policy", "automated", "--self-heal",
                            "--sync-option", "CreateNamespace=true", "--label", "team=web")
    assert (code, out) == (0, "application 'shop' created\n")
    created = h.app("shop")
    assert created["metadata"]["labels"] == {"team": "web"}
    assert created["spec"] == {
        "source": {"repoURL": h.remote.url, "path": "app", "targetRevision": "main"},
        "destination": {"server": "https://kubernetes.default.svc", "namespace": "demo"},
        "project": "default",
        "syncPolicy": {"automated": {"selfHeal": True}, "syncOptions": ["CreateNamespace=true"]},
    }
    assert create_shop(h, tmp_path, "--sync-policy", "automated", "--self-heal",
                       "--sync-option", "CreateNamespace=true", "--label", "team=web") == (
        0, "application 'shop' unchanged\n")
    code, out = create_shop(h, tmp_path, "--project", "other")
    assert code == 1 and "exists with a different spec; use --upsert" in out
    # --upsert replaces the spec whole, even fields another writer set
    patched = h.app("shop")
    patched["spec"]["info"] = [{"name": "owner", "value": "web-team"}]
    h.store.update({k: v for k, v in patched.items() if k != "status"}, field_manager="other")
    assert create_shop(h, tmp_path, "--upsert")[0] == 0
    assert "syncPolicy" not in h.app("shop")["spec"] and "info" not in h.app("shop")["spec"]
    # the controller takes it from there: automated sync applies the ConfigMap
    h.step("shop")
    assert h.status("shop")["sync"]["status"] == "OutOfSync"


def test_create_refuses_what_the_manifest_check_refuses(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("a"))})
    code, out = cli(tmp_path, "create", "shop", "--repo", h.remote.url, "--path", "app")
    assert code == 2 and "spec.destination" in out
    code, out = create_shop(h, tmp_path, "--auto-prune")
    assert code == 2 and "--auto-prune requires an automated sync policy" in out
    code, out = create_shop(h, tmp_path, "--sync-policy", "sometimes")
    assert code == 2 and "--sync-policy 'sometimes'" in out
    assert not h.exists("Application", "shop", APPS_NS)


def test_set_changes_only_the_flags_given(tmp_path: Path, clock: VirtualClock) -> None:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("a"))})
    create_shop(h, tmp_path, "--sync-policy", "automated")
    code, out = cli(tmp_path, "set", "shop", "--revision", "v2", "--auto-prune",
                    "--helm-set", "image.tag=v2", "--values", "values-prod.yaml")
    assert (code, out) == (0, "application 'shop' updated\n")
    spec = h.app("shop")["spec"]
    assert spec["source"] == {
        "repoURL": h.remote.url, "path": "app", "targetRevision": "v2",
        "helm": {"valueFiles": ["values-prod.yaml"],
                 "parameters": [{"name": "image.tag", "value": "v2"}]},
    }
    assert spec["syncPolicy"] == {"automated": {"prune": True}}
    assert cli(tmp_path, "set", "shop", "--sync-policy", "none")[0] == 0
    assert "syncPolicy" not in h.app("shop")["spec"]
    assert cli(tmp_path, "set", "shop", "--dest-namespace", "demo") == (
        0, "application 'shop' unchanged\n")
    assert cli(tmp_path, "set", "nope", "--path", "x")[0] == 1


def test_delete_cascades_through_the_controller(tmp_path: Path, clock: VirtualClock) -> None:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("a"))})
    create_shop(h, tmp_path, "--sync-policy", "automated")
    h.run("shop", lambda s: phase(s) == "Succeeded")
    assert h.exists("ConfigMap", "a")
    assert cli(tmp_path, "delete", "shop", stdin="n\n")[0] == 1  # not confirmed
    code, out = cli(tmp_path, "delete", "shop", "--yes")
    assert code == 0 and "application 'shop' deleted" in out
    assert RESOURCES_FINALIZER in h.app("shop")["metadata"]["finalizers"]
    for _ in range(10):
        if h.step("shop") is None and not h.exists("Application", "shop", APPS_NS):
            break
    assert not h.exists("ConfigMap", "a")
    assert not h.exists("Application", "shop", APPS_NS)


def test_delete_without_cascade_leaves_the_resources(tmp_path: Path, clock: VirtualClock) -> None:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("a"))})
    create_shop(h, tmp_path, "--sync-policy", "automated")
    h.run("shop", lambda s: phase(s) == "Succeeded")
    assert cli(tmp_path, "delete", "shop", "--no-cascade", "-y")[0] == 0
    assert not h.exists("Application", "shop", APPS_NS)
    assert h.exists("ConfigMap", "a")


def step_between_polls(h: Harness, monkeypatch: pytest.MonkeyPatch, clock: VirtualClock) -> None:
    def pause(seconds: float) -> None:
        clock.advance(seconds)
        h.step("shop")

    monkeypatch.setattr(app_edit.time, "sleep", pause)
    monkeypatch.setattr(app_edit.time, "monotonic", clock.monotonic)


def test_wait_returns_once_synced_healthy_and_idle(
    tmp_path: Path, clock: VirtualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("a"))})
    create_shop(h, tmp_path, "--sync-policy", "automated")
    step_between_polls(h, monkeypatch, clock)
    code, out = cli(tmp_path, "wait", "shop", "--timeout", "60")
    assert code == 0, out
    assert "application 'shop' reached the desired state: sync=Synced health=Healthy" in out
    assert phase(h.status("shop")) == "Succeeded"


def test_wait_times_out_with_argocds_exit_code(
    tmp_path: Path, clock: VirtualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(deployment("web"))})
    create_shop(h, tmp_path, "--sync-policy", "automated")  # nobody makes the Deployment ready
    step_between_polls(h, monkeypatch, clock)
    code, out = cli(tmp_path, "wait", "shop", "--sync", "--timeout", "5")
    assert code == 0, out  # synced is enough when only --sync is asked for
    code, out = cli(tmp_path, "wait", "shop", "--health", "--timeout", "5")
    assert code == 20
    assert "timed out (5s) waiting for app 'shop' to match the desired state" in out
    assert "health=Progressing" in out


def test_wait_fails_at_once_when_health_turns_degraded(
    tmp_path: Path, clock: VirtualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(deployment("web"))})
    create_shop(h, tmp_path, "--sync-policy", "automated")
    h.run("shop", lambda s: (s.get("health") or {}).get("status") == "Progressing")
    polls: list[float] = []

    def pause(seconds: float) -> None:
        clock.advance(seconds)
        polls.append(seconds)
        if len(polls) == 2:
            deadline = "ProgressDeadlineExceeded"
            failed = {"type": "Progressing", "status": "False", "reason": deadline}
            generation = h.get("Deployment", "web")["metadata"]["generation"]
            h.store.patch_status("apps/v1", "Deployment", "web", "demo",
                                 {"observedGeneration": generation, "conditions": [failed]})
        h.step("shop")

    monkeypatch.setattr(app_edit.time, "sleep", pause)
    monkeypatch.setattr(app_edit.time, "monotonic", clock.monotonic)
    code, out = cli(tmp_path, "wait", "shop", "--health", "--timeout", "60")
    assert code == 20
    assert "application 'shop' health state has transitioned from Progressing to Degraded" in out


def test_manifests_prints_what_will_be_applied(tmp_path: Path, clock: VirtualClock) -> None:
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "token"},
              "stringData": {"token": "hunter2-very-secret"}}
    files = {"app/all.yaml": manifests(config_map("a"), config_map("b"), secret)}
    h = make_harness(tmp_path, clock, files)
    create_shop(h, tmp_path)
    code, out = cli(tmp_path, "manifests", "shop")
    assert code == 0, out
    documents = [d for d in out.split("---\n") if d]
    assert len(documents) == 3
    assert "hunter2" not in out and "token: ++++++++" in out  # masked, as Argo CD shows it
    assert "name: a" in documents[0] and "namespace: demo" in documents[0]
    assert "app.kubernetes.io/instance: shop" in out  # tracking label, as applied
    code, out = cli(tmp_path, "manifests", "shop", "--source", "live")
    assert (code, out) == (0, "")  # nothing synced yet
    assert cli(tmp_path, "manifests", "shop", "--source", "cache")[0] == 2
