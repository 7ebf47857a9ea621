"""The Application page over a real Git remote and the real Application controller: the diff
of an OutOfSync app as `headway app diff` renders it (Secret values masked, ignored fields
left out and listed as ignored), and the history with each revision's commit message."""

from __future__ import annotations

import base64
import re
from pathlib import Path
from typing import Any

import httpx2
from dashboard_env import serving

from controllers.app_harness import (
    APPS_NS,
    application,
    config_map,
    make_harness,
    manifests,
    phase,
)
from headway.clock import VirtualClock
from headway.source.git import GitCache

SECRET_IN_GIT = base64.b64encode(b"git-side-password").decode()
SECRET_LIVE = base64.b64encode(b"live-side-password").decode()


def secret(value: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db"},
            "type": "Opaque", "data": {"password": value}}


def settings(value: str, ignored: str) -> dict[str, Any]:
    found = config_map("settings")
    found["data"] = {"level": value, "replicas-hint": ignored}
    return found


def test_the_diff_masks_secrets_and_leaves_ignored_fields_out(
    tmp_path: Path, clock: VirtualClock
) -> None:
    files = {"app/all.yaml": manifests(settings("debug", "3"), secret(SECRET_IN_GIT))}
    h = make_harness(tmp_path, clock, files)
    app = application("shop", h.remote.url, path="app")
    ignored = {"kind": "ConfigMap", "jsonPointers": ["/data/replicas-hint"]}
    app["spec"]["ignoreDifferences"] = [ignored]
    h.install(app)
    for live in (settings("info", "7"), secret(SECRET_LIVE)):
        h.store.apply({**live, "metadata": {**live["metadata"], "namespace": "demo"}},
                      field_manager="someone-else")
    h.step("shop")
    assert h.status("shop")["sync"]["status"] == "OutOfSync"
    with serving(h.store, tmp_path / "state") as served:
        page = httpx2.get(f"{served.url}/applications/{APPS_NS}/shop", timeout=30).text
        diff = httpx2.get(f"{served.url}/applications/{APPS_NS}/shop/diff", timeout=60).text
    assert "ConfigMap: /data/replicas-hint" in page  # listed as ignored
    assert "/ConfigMap demo/settings" in diff and "level: debug" in diff
    assert "replicas-hint" not in diff  # ignored, so never shown as a difference
    assert "/Secret demo/db" in diff
    for value in (SECRET_IN_GIT, SECRET_LIVE, "git-side-password", "live-side-password"):
        assert value not in page and value not in diff


def test_history_shows_each_revisions_commit_message(tmp_path: Path, clock: VirtualClock) -> None:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("a"))})
    revision = h.remote.commit({"app/all.yaml": manifests(config_map("a"), config_map("b"))},
                               "Add the b settings\n\nso that b can read them")
    h.install(application("shop", h.remote.url, path="app",
                          automated={"prune": True, "selfHeal": True}))
    h.run("shop", lambda s: phase(s) == "Succeeded")
    with serving(h.store, tmp_path / "state", git=GitCache(h.cache_dir)) as served:
        page = httpx2.get(f"{served.url}/applications/{APPS_NS}/shop", timeout=30).text
    history = re.search(r'<table id="app-history">(.*?)</table>', page, re.S)
    assert history is not None
    assert revision[:12] in history.group(1)
    assert "Add the b settings" in history.group(1)
    assert "so that b can read them" not in history.group(1)  # the first line only
