"""What a fresh interpreter imports: the one probe the start-up tests share.

Start-up cost is pinned structurally, never by timing: a case runs in a new interpreter (as
a `headway` command or a pre-commit hook starts) and the test reads `sys.modules` after it.
`run_headway` runs a command line through `headway.cli.entry.main()`, as the `headway` script
does; `run_python` runs any snippet, which may fill a `report` dict with more to return.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Probe", "run_headway", "run_python"]

_HEADWAY = """
import sys
from headway.cli import entry
sys.argv = ["headway", *sys.argv[1:]]
report = {"code": 0}
try:
    entry.main()
except SystemExit as exit:
    report["code"] = exit.code
"""

# Appended to every snippet: `report` (when the snippet made one) and the modules loaded.
_REPORT = """
import json as _json, sys as _sys
_report = dict(globals().get("report") or {})
_report["modules"] = sorted(_sys.modules)
_views = _sys.modules.get("headway.model.views")
_report["pending_views"] = sorted(
    f"{c.__module__}.{c.__qualname__}" for c in _views.declared_views() if _views.is_pending(c)
) if _views is not None else []
print(_json.dumps(_report), file=_sys.stderr)
"""


@dataclass(frozen=True)
class Probe:
    """One fresh interpreter's run: its exit status as the command gave it, the modules
    loaded when it ended, what it printed (stdout then stderr), the snippet's report, and
    the typed views (`model.views.view`, by qualified name) nothing used."""

    code: int
    modules: frozenset[str]
    output: str
    report: Mapping[str, Any]
    pending_views: frozenset[str] = frozenset()

    def loaded(self, names: Iterable[str]) -> list[str]:
        """The modules among `names` that were imported; a name ending in "." stands for
        every module of that package."""
        return sorted(
            m
            for m in self.modules
            for n in names
            if m == n or (n.endswith(".") and m.startswith(n))
        )

    def missing(self, names: Iterable[str]) -> list[str]:
        """The modules among `names` (exact names) that were not imported."""
        return sorted(n for n in names if n not in self.modules)


def run_python(
    source: str, *argv: str, env: Mapping[str, str] | None = None, timeout: float = 120
) -> Probe:
    """Run `source` with `argv` in a new interpreter and report what it imported."""
    done = subprocess.run(
        [sys.executable, "-c", source + _REPORT, *argv],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
        check=False,
    )
    lines = done.stderr.strip().splitlines()
    if done.returncode != 0 or not lines:
        raise AssertionError(f"the probe failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    report: dict[str, Any] = json.loads(lines[-1])
    modules = frozenset(report.pop("modules"))
    pending_views = frozenset(report.pop("pending_views"))
    output = done.stdout + "\n".join(lines[:-1])
    return Probe(report.get("code", 0), modules, output, report, pending_views)


def run_headway(*argv: str, env: Mapping[str, str] | None = None) -> Probe:
    """`headway ARGV...` in a new interpreter; `code` is the command's exit status."""
    return run_python(_HEADWAY, *argv, env=env)
