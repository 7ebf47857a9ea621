"""`headway rollouts get` prints what the cluster holds as written: a status message, a pause
reason or a measurement can hold `[...]` or backslashes, which Rich reads as markup in a plain
string (`[error-rate]` was dropped as an unknown style, `\\[` lost its backslash)."""

from __future__ import annotations

from rich.console import Console

from headway.cli.rollouts_view import render
from headway.steering.rollout_summary import RolloutSummary

MESSAGE = "metric [error-rate] assessed Failed: rate(x\\[5m]) > [bold]0.05"


def test_status_text_is_printed_as_written() -> None:
    obj = {
        "metadata": {"name": "web", "namespace": "default"},
        "status": {
            "phase": "Degraded",
            "message": MESSAGE,
            "pauseConditions": [{"reason": "[dim]held\\"}],
            "blueGreen": {"activeSelector": "[x]"},
        },
    }
    console = Console(record=True, width=200, color_system=None)
    console.print(render(RolloutSummary(obj, None, (), {}, ())))
    text = console.export_text()
    assert MESSAGE in text
    assert "[dim]held\\" in text
    assert "Active:" in text and "[x]" in text
