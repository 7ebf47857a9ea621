"""A source Headway cannot render is a ComparisonError naming the field, never an empty app."""

from __future__ import annotations

from pathlib import Path

from app_harness import application, config_map, make_harness, manifests

from headway.clock import VirtualClock


def test_an_unknown_plugin_is_a_comparison_error_not_a_directory(
    tmp_path: Path, clock: VirtualClock
) -> None:
    """Once the plugin section was ignored and `app/` was read as plain manifests (or a
    kustomization), so the app synced something the plugin never produced; a plugin that is
    not configured is an error naming the field and what is configured."""
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("settings"))})
    app = application("shop", h.remote.url, path="app", automated={})
    app["spec"]["source"]["plugin"] = {"name": "envsubst"}
    h.install(app)
    status = h.run("shop", lambda s: bool(s.get("conditions")))
    condition = status["conditions"][0]
    assert condition["type"] == "ComparisonError"
    assert (
        "source.plugin.name: no plugin 'envsubst' (no plugins are configured"
        in condition["message"]
    )
    assert status["sync"]["status"] == "Unknown"
    assert not h.exists("ConfigMap", "settings")
