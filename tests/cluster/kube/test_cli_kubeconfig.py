"""`headway apply/get/describe/delete/logs --kubeconfig` act on the API server the
kubeconfig names (here the local runtime's API over a store no command opens directly):
what they write is in that server's store, what they print comes from it."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from headway.cli.main import _register_all, app
from headway.clock import SystemClock
from headway.cluster.local import LocalCluster

runner = CliRunner()
_register_all()

MANIFEST = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  labels: {team: web}
data:
  mode: canary
"""


def _run(tmp_path: Path, config: Path, *args: str, stdin: str | None = None) -> str:
    # --state-dir points where no store exists: only the API can answer.
    empty = tmp_path / "no-runtime"
    result = runner.invoke(app, [*args, "--kubeconfig", str(config), "--state-dir", str(empty)],
                           input=stdin)
    assert result.exit_code == 0, result.output
    return result.output


def test_apply_get_describe_delete_go_through_the_api(
    tmp_path: Path, api: tuple[Path, Path]
) -> None:
    config, db = api
    assert "configmap/settings created" in _run(tmp_path, config, "apply", "-f", "-",
                                                 stdin=MANIFEST)
    with LocalCluster(db, SystemClock()) as store:
        stored = store.get("v1", "ConfigMap", "settings", "default")
    assert stored["data"] == {"mode": "canary"}
    assert "headway-cli" in {m["manager"] for m in stored["metadata"]["managedFields"]}
    assert "settings" in _run(tmp_path, config, "get", "cm")
    assert "mode: canary" in _run(tmp_path, config, "get", "cm", "settings", "-o", "yaml")
    assert "team=web" in _run(tmp_path, config, "describe", "cm", "settings")
    _run(tmp_path, config, "delete", "cm", "settings")
    with LocalCluster(db, SystemClock()) as store:
        assert store.list("v1", "ConfigMap") == []


def test_a_missing_object_and_an_unknown_context_are_one_line_errors(
    tmp_path: Path, api: tuple[Path, Path]
) -> None:
    config, _ = api
    missing = runner.invoke(app, ["get", "cm", "nope", "--kubeconfig", str(config)])
    assert (missing.exit_code, missing.output.strip()) == (
        1, 'error: configmaps "nope" not found')
    wrong = runner.invoke(app, ["get", "cm", "--kubeconfig", str(config), "--context", "eks"])
    assert wrong.exit_code == 1
    assert "Context 'eks' not found" in wrong.output
    assert "Traceback" not in wrong.output
