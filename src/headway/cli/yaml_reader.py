"""The YAML reader's switches, read from the environment of a `headway` process.

- `HEADWAY_YAML_RUST=0`: read everything with PyYAML, never with yaml_rs
  (`headway.model.yamlrust`), should its reading ever be in doubt.
- `HEADWAY_YAML_CROSSCHECK=1`: read every text yaml_rs reads with PyYAML as well, and fail
  where the two differ; set to a file name instead of 1, each disagreement is also appended
  to that file (the test suite's way of hearing from the processes it starts).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

__all__ = ["SWITCHES", "configure"]

SWITCHES = ("HEADWAY_YAML_RUST", "HEADWAY_YAML_CROSSCHECK")


def configure(environ: Mapping[str, str] = os.environ) -> None:
    """Set the reader's switches from `environ` (unset variables change nothing)."""
    from headway.model import yamlrust

    if environ.get("HEADWAY_YAML_RUST") == "0":
        yamlrust.use(False)
    target = environ.get("HEADWAY_YAML_CROSSCHECK", "")
    if target not in ("", "0"):
        yamlrust.compare_with_pyyaml(None if target == "1" else appender(target))


def appender(path: str) -> Callable[[str], None]:
    """A report that appends each message to the file at `path`."""

    def report(message: str) -> None:
        with open(path, "a", encoding="utf-8") as out:
            out.write(message + "\n\n")

    return report
