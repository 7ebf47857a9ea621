"""docs/embedding.md shows a program embedding the engine and what it prints: the program is
run as written, in a fresh interpreter, and must print exactly that."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "embedding.md"


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", PAGE.read_text(), re.S)


def test_the_embedding_example_prints_what_the_page_says(tmp_path: Path) -> None:
    (program,) = _blocks("python")
    (printed,) = _blocks("text")
    script = tmp_path / "embed.py"
    script.write_text(program)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    result = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == printed
