"""The check called many times inside one long-lived process (the controller, the dashboard)
must not lose references: a lost reference to None per call ended, after about 800 calls, in
`Fatal Python error: none_dealloc`."""

from __future__ import annotations

import gc
import sys
from pathlib import Path

from headway.cli.check import run_check

CALLS = 100


def _none_references_lost(path: Path) -> int:
    run_check(path)  # the first call fills caches
    gc.collect()
    before = sys.getrefcount(None)
    for _ in range(CALLS):
        run_check(path)
    gc.collect()
    return before - sys.getrefcount(None)


def test_checking_outside_a_git_repository_keeps_every_reference(tmp_path: Path) -> None:
    (tmp_path / "app.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    # A lost reference per call shows as CALLS; caches may move the count by a few either way.
    assert _none_references_lost(tmp_path) < CALLS // 10
