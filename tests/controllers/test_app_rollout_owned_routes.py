"""The Application controller leaves the route weights its own Rollout controller writes.

Seed 000: a sync or self-heal mid-canary writes Git's weights (stable 100, canary 0) back
over the ones the Rollout set, and traffic flaps; Argo CD avoids it only when every
Application carries an ignore rule for the weights with RespectIgnoreDifferences=true.
Before: with selfHeal on, Headway's Application controller reset the VirtualService to Git's
weights at its next step (and read OutOfSync until it did). Now the weights of a route a
Rollout of the same Application names are the Rollout's; a route no Rollout names keeps
Git's weights."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app_harness import Harness, application, make_harness, manifests

from headway.clock import VirtualClock
from headway.controllers.app.rollout_owned import owned_field_notes


def _rollout(virtual_service: str) -> dict[str, Any]:
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Rollout",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "web:1"}]},
            },
            "strategy": {
                "canary": {
                    "stableService": "web-stable",
                    "canaryService": "web-canary",
                    "trafficRouting": {"istio": {"virtualService": {"name": virtual_service}}},
                    "steps": [{"setWeight": 20}, {"pause": {}}],
                }
            },
        },
    }


def _virtual_service(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "networking.istio.io/v1beta1",
        "kind": "VirtualService",
        "metadata": {"name": name},
        "spec": {
            "hosts": ["web"],
            "http": [
                {
                    "name": "primary",
                    "route": [
                        {"destination": {"host": "web-stable"}, "weight": 100},
                        {"destination": {"host": "web-canary"}, "weight": 0},
                    ],
                }
            ],
        },
    }


def _sync_status(status: dict[str, Any]) -> str:
    return str((status.get("sync") or {}).get("status") or "")


def _canary_at(h: Harness, weight: int) -> None:
    """What the Rollout controller does at `setWeight`: its own write of the weights."""
    live = _live(h)
    route = live["spec"]["http"][0]["route"]
    route[0]["weight"], route[1]["weight"] = 100 - weight, weight
    h.store.update(live, field_manager="headway-rollouts-controller")


def _weights(h: Harness) -> list[int]:
    return [d["weight"] for d in _live(h)["spec"]["http"][0]["route"]]


def _live(h: Harness) -> dict[str, Any]:
    return h.store.get("networking.istio.io/v1beta1", "VirtualService", "web-vsvc", "demo")


def _harness(tmp_path: Path, clock: VirtualClock, *, named_by: str) -> Harness:
    files = {"app/all.yaml": manifests(_rollout(named_by), _virtual_service("web-vsvc"))}
    h = make_harness(tmp_path, clock, files)
    automated = {"prune": True, "selfHeal": True}
    h.install(application("shop", h.remote.url, path="app", automated=automated))
    h.run("shop", lambda s: _sync_status(s) == "Synced")
    assert _weights(h) == [100, 0]
    return h


def test_self_heal_leaves_the_weights_a_rollout_set(tmp_path: Path, clock: VirtualClock) -> None:
    h = _harness(tmp_path, clock, named_by="web-vsvc")
    _canary_at(h, 20)
    for _ in range(4):
        status = h.run("shop", lambda s: True, steps=1)
        clock.advance(30)
        assert _sync_status(status) == "Synced"
        assert _weights(h) == [80, 20]
    comparison, errors = h.controller.compare("shop", "argocd")
    assert errors == [] and comparison is not None and comparison.sync_status == "Synced"
    assert owned_field_notes(comparison, "demo") == [
        "VirtualService/web-vsvc .spec.http[].route[].weight: [80, 20] live, [100, 0] in Git: "
        "left to Rollout/web, which sets them during a canary (not a difference)"
    ]


def test_a_manual_sync_keeps_them_too(tmp_path: Path, clock: VirtualClock) -> None:
    from app_harness import request_sync

    h = _harness(tmp_path, clock, named_by="web-vsvc")
    _canary_at(h, 20)
    request_sync(h, "shop")
    h.run("shop", lambda s: (s.get("operationState") or {}).get("phase") == "Succeeded")
    assert _weights(h) == [80, 20]


def test_a_route_no_rollout_names_keeps_gits_weights(tmp_path: Path, clock: VirtualClock) -> None:
    h = _harness(tmp_path, clock, named_by="another-vsvc")
    _canary_at(h, 20)
    h.run("shop", lambda s: _weights(h) == [100, 0], steps=6)
