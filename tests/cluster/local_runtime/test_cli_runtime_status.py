"""`headway runtime status` of a stopped runtime, and `runtime up` refusing bad options."""

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


def test_up_refuses_a_missing_config_and_a_state_dir_that_is_a_file(tmp_path: Path) -> None:
    missing = runner.invoke(
        app, ["runtime", "up", "--state-dir", str(tmp_path / "s"), "--config", "/no/such.yaml"]
    )
    assert missing.exit_code == 2
    assert "'/no/such.yaml' does not exist" in " ".join(missing.output.replace("│", " ").split())
    assert not (tmp_path / "s").exists()  # nothing started, nothing created
    a_file = tmp_path / "file"
    a_file.write_text("")
    result = runner.invoke(app, ["runtime", "up", "--state-dir", str(a_file)])
    assert result.exit_code == 2
    assert "is not a directory" in " ".join(result.output.replace("│", " ").split())
    assert "Traceback" not in result.output


def test_up_with_a_broken_config_exits_2_naming_the_file(tmp_path: Path) -> None:
    config = tmp_path / "headway-runtime.yaml"
    config.write_text("images:\n  app:\n    colour: blue\n")
    state = tmp_path / "s"
    result = runner.invoke(
        app, ["runtime", "up", "--state-dir", str(state), "--config", str(config)]
    )
    assert result.exit_code == 2, result.output
    assert f"{config}:3: images.app.colour: unknown field" in result.output
    down = runner.invoke(app, ["runtime", "down", "--state-dir", str(state)])
    assert down.output == "runtime was not running\n"
