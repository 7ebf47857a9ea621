"""`--help` names every config file `headway check` and `headway diff` read: before, both said
"default: .headway/check.yaml" while `headway-check.yaml` at the root is read too, the name
docs/examples.md tells newcomers to use (`.headway/` is in `.gitignore`)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from headway.check.config import CONFIG_FILES


@pytest.mark.parametrize("command", ["check", "diff"])
def test_help_names_each_config_file(command: str) -> None:
    env = {**os.environ, "COLUMNS": "400", "NO_COLOR": "1", "TERM": "dumb"}
    shown = subprocess.run(
        [sys.executable, "-m", "headway", command, "--help"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=True,
    ).stdout
    for name in CONFIG_FILES:
        assert name in shown, name
