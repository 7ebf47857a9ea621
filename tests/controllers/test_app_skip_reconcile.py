"""`argocd.argoproj.io/skip-reconcile: "true"` leaves an Application alone, as in Argo CD.

Before: Headway did not read the annotation, so an Application an operator had frozen with it
(Argo CD's annotations page) was still refreshed and, with automated sync, synced.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from app_harness import application, config_map, make_harness, manifests

from headway.clock import VirtualClock
from headway.model.argocd_annotations import SKIP_RECONCILE_ANNOTATION, skips_reconcile


def test_a_skipped_application_is_neither_synced_nor_written_until_the_annotation_goes(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("settings"))})
    app = application("shop", h.remote.url, path="app", automated={})
    app["metadata"]["annotations"] = {SKIP_RECONCILE_ANNOTATION: "true"}
    h.install(app)
    for _ in range(5):
        h.step("shop")
        clock.advance(60)
    assert h.status("shop") == {}
    assert not h.exists("ConfigMap", "settings")
    live = h.app("shop")
    live["metadata"]["annotations"] = {}
    h.store.update(live, field_manager="test")
    h.run("shop", lambda s: (s.get("sync") or {}).get("status") == "Synced")
    assert h.exists("ConfigMap", "settings")


@pytest.mark.parametrize(
    ("value", "skips"),
    [("true", True), ("1", True), ("True", True), ("false", False), ("yes", False), ("", False)],
)
def test_the_value_is_read_as_go_parses_a_bool(value: str, skips: bool) -> None:
    assert skips_reconcile({"annotations": {SKIP_RECONCILE_ANNOTATION: value}}) is skips
