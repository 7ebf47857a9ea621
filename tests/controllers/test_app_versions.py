"""A resource written in an older served version compares against live in that version."""

from __future__ import annotations

from pathlib import Path

from app_harness import application, make_harness, manifests

from headway.clock import VirtualClock


def _virtual_service(api_version: str) -> dict[str, object]:
    return {
        "apiVersion": api_version,
        "kind": "VirtualService",
        "metadata": {"name": "web"},
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


def test_a_v1beta1_manifest_is_synced_when_live_is_served_as_v1(
    tmp_path: Path, clock: VirtualClock
) -> None:
    # The store serves VirtualService in v1, v1beta1 and v1alpha3 and lists it as v1. As in
    # Argo CD, live state is compared in the version the manifest is written in, so the
    # version alone never makes an Application OutOfSync.
    files = {"app/vs.yaml": manifests(_virtual_service("networking.istio.io/v1beta1"))}
    h = make_harness(tmp_path, clock, files)
    h.install(application("mesh", h.remote.url, path="app", automated={}))
    status = h.run("mesh", lambda s: (s.get("operationState") or {}).get("phase") == "Succeeded")
    status = h.run("mesh", lambda s: s["sync"]["status"] != "Unknown")
    assert status["sync"]["status"] == "Synced", status["resources"]
