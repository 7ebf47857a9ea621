"""`headway promote / approve / deny / promotions` against a real store: refusals are clear
one-line errors (skipping the pipeline, break-glass without a reason, self-approval, an
approver off the list, a withdrawn approval), and what is accepted is what the controller
reads."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from headway.cli.main import _register_all, app
from headway.clock import SystemClock
from headway.cluster.local.api.store import LocalCluster
from headway.promotion.record import API_VERSION, KIND, read_spec

runner = CliRunner()
_register_all()

PIPELINE: dict[str, Any] = {
    "apiVersion": "headway.dev/v1alpha1",
    "kind": "PromotionPipeline",
    "metadata": {"name": "web", "namespace": "argocd"},
    "spec": {
        "image": "registry.local/web",
        "environments": [
            {
                "name": "dev",
                "application": "web-dev",
                "target": {"file": "dev.yaml", "helm": {"key": "image.tag"}},
                "gate": {"approval": {"required": True, "approvers": ["lead", "dev"]}},
            },
            {
                "name": "prod",
                "application": "web-prod",
                "target": {"file": "prod.yaml", "helm": {"key": "image.tag"}},
                "gate": {"approval": {"required": True, "approvers": ["lead", "dev"]}},
            },
        ],
    },
}


@pytest.fixture
def store(tmp_path: Path) -> LocalCluster:
    cluster = LocalCluster(tmp_path / "cluster.db", SystemClock())
    cluster.apply(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "argocd"}},
        field_manager="test",
    )
    cluster.apply(copy.deepcopy(PIPELINE), field_manager="test")
    return cluster


def _cli(tmp_path: Path, *args: str, code: int = 0) -> str:
    result = runner.invoke(app, [*args, "--state-dir", str(tmp_path)])
    assert result.exit_code == code, result.output
    return result.output


def _awaiting(store: LocalCluster, name: str) -> None:
    obj = store.get(API_VERSION, KIND, name, "argocd")
    now = "2099-01-01T00:00:00Z"
    store.patch_status(
        API_VERSION,
        KIND,
        name,
        "argocd",
        {
            "phase": "AwaitingApproval",
            "message": "",
            "approval": {"requestedAt": obj["spec"]["requestedAt"], "deadline": now},
        },
    )


def _only(store: LocalCluster) -> str:
    [obj] = store.list(API_VERSION, KIND)
    return str(obj["metadata"]["name"])


def test_skipping_to_a_gated_environment_is_refused(tmp_path: Path, store: LocalCluster) -> None:
    out = _cli(tmp_path, "promote", "web", "--to", "prod", "--image", "v2", "--as", "dev", code=1)
    assert "has not succeeded in dev" in out and "--break-glass" in out
    assert store.list(API_VERSION, KIND) == []
    out = _cli(
        tmp_path,
        "promote",
        "web",
        "--to",
        "prod",
        "--image",
        "v2",
        "--as",
        "dev",
        "--break-glass",
        code=2,
    )
    assert "--reason" in out
    out = _cli(
        tmp_path,
        "promote",
        "web",
        "--to",
        "prod",
        "--image",
        "v2",
        "--as",
        "dev",
        "--break-glass",
        "--reason",
        "prod is down",
    )
    assert "BREAK-GLASS" in out
    spec = read_spec(store.get(API_VERSION, KIND, _only(store), "argocd"))
    assert spec.break_glass is not None and spec.break_glass.reason == "prod is down"
    assert spec.image == "registry.local/web:v2" and spec.author == "dev"


def test_approvals_refuse_the_author_and_strangers_and_record_the_rest(
    tmp_path: Path, store: LocalCluster
) -> None:
    _cli(tmp_path, "promote", "web", "--to", "dev", "--image", "v2", "--as", "dev")
    name = _only(store)
    out = _cli(tmp_path, "approve", name, "--as", "lead", code=1)
    assert "Pending" in out and "no approval to decide" in out
    _awaiting(store, name)
    assert "cannot approve" in _cli(tmp_path, "approve", name, "--as", "dev", code=1)
    assert "not an approver" in _cli(tmp_path, "approve", name, "--as", "eve", code=1)
    assert "approved" in _cli(tmp_path, "approve", name, "--as", "Lead", "--comment", "ok")
    [decision] = read_spec(store.get(API_VERSION, KIND, name, "argocd")).decisions
    assert (decision.verdict, decision.by, decision.comment) == ("approve", "Lead", "ok")
    listed = _cli(tmp_path, "promotions", "list")
    assert name in listed and "AwaitingApproval" in listed
    shown = _cli(tmp_path, "promotions", "get", name)
    assert "Decision:    approve by Lead" in shown


def test_identity_falls_back_to_the_environment(
    tmp_path: Path, store: LocalCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HEADWAY_USER", "ci-bot")
    _cli(tmp_path, "promote", "web", "--to", "dev", "--image", "v3")
    assert read_spec(store.get(API_VERSION, KIND, _only(store), "argocd")).author == "ci-bot"


def _succeeded(store: LocalCluster, name: str, env: str, tag: str, at: str) -> None:
    store.apply({
        "apiVersion": API_VERSION, "kind": KIND,
        "metadata": {"name": name, "namespace": "argocd"},
        "spec": {"pipeline": "web", "environment": env, "image": f"registry.local/web:{tag}",
                 "author": "dev", "requestedAt": at},
    }, field_manager="test")
    store.patch_status(API_VERSION, KIND, name, "argocd", {"phase": "Succeeded", "message": ""})


def test_rollback_promotes_the_previous_good_image_through_the_gate(
    tmp_path: Path, store: LocalCluster
) -> None:
    out = _cli(tmp_path, "promote", "web", "--to", "prod", "--rollback", "--as", "dev", code=1)
    assert "nothing to roll back to" in out
    _succeeded(store, "p2", "prod", "v2", "2026-01-01T00:00:00Z")
    _succeeded(store, "p3", "prod", "v3", "2026-01-02T00:00:00Z")
    _cli(tmp_path, "promote", "web", "--to", "prod", "--rollback", "--as", "dev")
    [new] = [p for p in store.list(API_VERSION, KIND) if p["metadata"]["name"] not in ("p2", "p3")]
    spec = read_spec(new)
    assert (spec.image, spec.origin, spec.environment) == ("registry.local/web:v2", "rollback",
                                                          "prod")


def test_a_hotfix_needs_a_reason_and_hotfix_keys(tmp_path: Path, store: LocalCluster) -> None:
    assert "--reason" in _cli(tmp_path, "promote", "web", "--to", "dev", "--image", "v2",
                              "--hotfix", "--as", "dev", code=2)
    out = _cli(tmp_path, "promote", "web", "--to", "dev", "--image", "v2", "--hotfix",
               "--reason", "stuck", "--as", "dev", code=1)
    assert "declares no hotfix keys" in out


def test_watch_exits_with_how_the_promotion_ended(tmp_path: Path, store: LocalCluster) -> None:
    _succeeded(store, "p2", "prod", "v2", "2026-01-01T00:00:00Z")
    assert "Succeeded" in _cli(tmp_path, "promotions", "watch", "p2", "--timeout", "5")
    _succeeded(store, "p3", "prod", "v3", "2026-01-02T00:00:00Z")
    store.patch_status(API_VERSION, KIND, "p3", "argocd",
                       {"phase": "Denied", "message": "denied by lead via cli"})
    assert "Denied: denied by lead" in _cli(tmp_path, "promotions", "watch", "p3", code=1)


def test_headway_get_promotions_shows_pipeline_environment_image_and_phase(
    tmp_path: Path, store: LocalCluster
) -> None:
    _succeeded(store, "p2", "prod", "v2", "2026-01-01T00:00:00Z")
    out = _cli(tmp_path, "get", "promotions", "-n", "argocd")
    header, row = out.splitlines()[:2]
    assert header.split()[:5] == ["NAME", "PIPELINE", "ENV", "IMAGE", "PHASE"]
    assert row.split()[:5] == ["p2", "web", "prod", "registry.local/web:v2", "Succeeded"]


def test_get_shows_the_release_through_the_pipeline(tmp_path: Path, store: LocalCluster) -> None:
    _succeeded(store, "d2", "dev", "v2", "2026-01-01T00:00:00Z")
    _succeeded(store, "p2", "prod", "v2", "2026-01-01T00:05:00Z")
    _succeeded(store, "d3", "dev", "v3", "2026-01-01T00:06:00Z")
    shown = _cli(tmp_path, "promotions", "get", "p2")
    assert "Release:     dev Succeeded -> prod Succeeded" in shown
