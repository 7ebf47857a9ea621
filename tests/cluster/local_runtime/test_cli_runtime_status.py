"""`headway runtime status` of a stopped runtime whose store still holds objects."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from headway.cli.main import _register_all, app

_register_all()
runner = CliRunner()

SERVICE = """\
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {selector: {app: web}, ports: [{port: 80}]}
"""


def test_stopped_status_says_the_recorded_state_is_not_live(tmp_path: Path) -> None:
    manifest = tmp_path / "svc.yaml"
    manifest.write_text(SERVICE)
    state = tmp_path / "state"
    applied = runner.invoke(app, ["apply", "-f", str(manifest), "--state-dir", str(state)])
    assert applied.exit_code == 0, applied.output
    result = runner.invoke(app, ["runtime", "status", "--state-dir", str(state)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "runtime: stopped"
    assert lines[2] == f"store:   {(state / 'cluster.db').resolve()}"
    assert "no Pod runs and no address below answers" in lines[3]
    assert "Services:    1" in lines
