"""The `headway` entry point: a Ctrl-C while the commands are imported exits 130 quietly."""

from __future__ import annotations

import pytest

from headway.cli import main as cli_main


def test_ctrl_c_while_loading_commands_exits_130_without_a_traceback(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def interrupted() -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_main, "_register_all", interrupted)
    with pytest.raises(SystemExit) as exited:
        cli_main.main()
    assert exited.value.code == 130
    assert exited.value.__suppress_context__  # no "During handling of..." chain either
