"""The drill loads numpy without OpenBLAS's spinning thread pool (drill/numeric.py), leaves the
environment as it found it, and keeps a setting the user made. Each case in a new interpreter,
where numpy is not loaded yet; threads are counted in /proc (Linux)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(
    not os.path.isdir("/proc/self/task"), reason="threads are counted in /proc/self/task"
)

SNIPPET = """
import json, os, sys
if sys.argv[1] == "drill":  # what `headway check` and `headway drill` load
    from headway.drill import summary, traffic
    np = summary.np
    assert traffic.np is np
else:
    import numpy as np
print(json.dumps({
    "threads": len(os.listdir("/proc/self/task")),
    "variable": os.environ.get("OPENBLAS_NUM_THREADS"),
    "numpy": np.__name__,
}))
"""


def loaded(how: str, **env: str) -> dict[str, object]:
    clean = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    done = subprocess.run(
        [sys.executable, "-c", SNIPPET, how],
        capture_output=True,
        text=True,
        env={**clean, **env},
        timeout=60,
        check=True,
    )
    answer: dict[str, object] = json.loads(done.stdout)
    return answer


def test_the_drill_loads_numpy_on_one_thread_and_unsets_the_variable() -> None:
    plain = loaded("plain")
    if plain["threads"] == 1:
        pytest.skip("OpenBLAS starts no thread on this machine (one core)")
    ours = loaded("drill")
    assert ours == {"threads": 1, "variable": None, "numpy": "numpy"}


def test_a_users_setting_is_kept() -> None:
    ours = loaded("drill", OPENBLAS_NUM_THREADS="2")
    assert ours["variable"] == "2"
    assert ours["threads"] == loaded("plain", OPENBLAS_NUM_THREADS="2")["threads"]
