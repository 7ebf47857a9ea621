"""The check called many times inside one long-lived process (the controller, the dashboard)
must not lose references: a lost reference to None per call ended, after about 800 calls, in
`Fatal Python error: none_dealloc`.

The count is taken in a fresh interpreter: in a test worker, threads other tests left behind
(event loops, servers) take and drop references to None while the calls run, which moved the
count by a dozen in one whole-suite run although no call lost anything."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

CALLS = 100

_COUNT = textwrap.dedent(
    """
    import gc, sys
    from pathlib import Path
    from headway.cli.check import run_check

    path = Path(sys.argv[1])
    run_check(path)  # the first call fills caches
    gc.collect()
    before = sys.getrefcount(None)
    for _ in range(int(sys.argv[2])):
        run_check(path)
    gc.collect()
    print(before - sys.getrefcount(None))
    """
)


def _none_references_lost(path: Path) -> int:
    done = subprocess.run(
        [sys.executable, "-c", _COUNT, str(path), str(CALLS)],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    return int(done.stdout.strip().splitlines()[-1])


def test_checking_outside_a_git_repository_keeps_every_reference(tmp_path: Path) -> None:
    (tmp_path / "app.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    # A lost reference per call shows as CALLS; caches may move the count by a few either way.
    assert _none_references_lost(tmp_path) < CALLS // 10
