"""`headway serve` refuses bad options with a usage error or one line, never a traceback."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from headway.cli.main import _register_all, app

_register_all()
runner = CliRunner()


def test_missing_apps_and_health_scripts_paths_are_usage_errors(tmp_path: Path) -> None:
    state = str(tmp_path / "state")
    for option in ("--apps", "--health-scripts"):
        result = runner.invoke(app, ["serve", "--state-dir", state, option, "/no/such/path"])
        assert result.exit_code == 2, result.output
        words = " ".join(result.output.replace("│", " ").split())
        assert option in words and "'/no/such/path' does not exist" in words


def test_an_out_of_range_metrics_port_is_a_usage_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["serve", "--state-dir", str(tmp_path), "--metrics-port", "99999"])
    assert result.exit_code == 2
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_a_taken_metrics_port_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = runner.invoke(
            app, ["serve", "--state-dir", str(tmp_path), "--metrics-port", str(port)]
        )
    assert result.exit_code == 1
    assert f"error: cannot start the controllers (--metrics-port {port}):" in result.output
    assert "Traceback" not in result.output


def test_a_state_dir_that_is_a_file_is_a_usage_error(tmp_path: Path) -> None:
    a_file = tmp_path / "state"
    a_file.write_text("")
    result = runner.invoke(app, ["serve", "--state-dir", str(a_file)])
    assert result.exit_code == 2
    assert "is a file" in " ".join(result.output.replace("│", " ").split())


def test_serve_without_a_runtime_says_pods_will_not_start(tmp_path: Path) -> None:
    state = tmp_path / "state"
    serve = subprocess.Popen(
        [sys.executable, "-m", "headway", "serve", "--state-dir", str(state)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert serve.stdout is not None and serve.stderr is not None
        assert serve.stdout.readline().startswith("serving ")
        note = serve.stderr.readline()
    finally:
        serve.terminate()
        serve.wait(timeout=30)
    assert note.startswith(f"note: no local runtime is running with state {state}:")
    assert serve.returncode == 0


def test_shards_need_a_kubernetes_api_and_a_shard_among_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "kubeconfig"
    config.write_text("apiVersion: v1\nkind: Config\n")
    monkeypatch.setenv("POD_NAME", "headway")  # no ordinal to infer the shard from
    cases = {
        ("--shards", "2", "--shard", "1"): "add --kubeconfig, --context or --in-cluster",
        ("--shards", "2", "--shard", "2", "--kubeconfig", str(config)): "shard 2 is not one "
        "of 0..1",
        ("--shards", "2", "--kubeconfig", str(config)): "the replica's name 'headway' does "
        "not end in -<ordinal>",
        ("--shard", "1"): "shard 1 of 1 shard",
    }
    for args, message in cases.items():
        result = runner.invoke(app, ["serve", "--state-dir", str(tmp_path / "s"), *args])
        assert result.exit_code == 2, result.output
        assert message in " ".join(result.output.replace("│", " ").split()), result.output


def test_scm_provider_flags_become_the_forge_policy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from headway.appset.forge_policy import ForgePolicy
    from headway.cli import serve as serve_module
    from headway.engine import EngineSettings

    seen: list[EngineSettings] = []

    async def record(settings: EngineSettings, *_: object, **__: object) -> None:
        seen.append(settings)

    monkeypatch.setattr(serve_module, "serve", record)
    state = str(tmp_path / "s")
    result = runner.invoke(app, ["serve", "--state-dir", state])
    assert result.exit_code == 0, result.output
    flags = [
        "--allowed-scm-providers", "https://ghe.example.com/,https://ghe2.example.com",
        "--allowed-scm-providers", "https://ghe3.example.com/api/v3",
        "--no-token-ref-strict-mode", "--disable-scm-providers",
    ]
    result = runner.invoke(app, ["serve", "--state-dir", state, *flags])
    assert result.exit_code == 0, result.output
    assert seen[0].forge_policy == ForgePolicy()
    assert seen[1].forge_policy == ForgePolicy(
        enabled=False,
        allowed_api_urls=(
            "https://ghe.example.com/", "https://ghe2.example.com", "https://ghe3.example.com/api/v3"
        ),
        token_ref_strict=False,
    )


def test_an_allowed_scm_provider_that_cannot_be_an_api_root_is_a_usage_error(
    tmp_path: Path,
) -> None:
    url = "https://user:pw@ghe.example.com"
    state = str(tmp_path / "s")
    result = runner.invoke(app, ["serve", "--state-dir", state, "--allowed-scm-providers", url])
    assert result.exit_code == 2, result.output
    words = " ".join(result.output.replace("│", " ").split())
    assert "--allowed-scm-providers" in words and "a URL with a user part" in words
