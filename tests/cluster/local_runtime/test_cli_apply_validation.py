"""`headway apply --validate=strict|warn|ignore`: refused fields are named at their line."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from headway.cli.main import _register_all, app
from headway.clock import SystemClock
from headway.cluster.local.api.store import LocalCluster

_register_all()
runner = CliRunner()

MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replica: 3
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: main
        image: web:1
"""


def _apply(tmp_path: Path, text: str, *flags: str) -> tuple[int, str, Path]:
    manifest = tmp_path / "app.yaml"
    manifest.write_text(text)
    state = tmp_path / "state"
    result = runner.invoke(app, ["apply", "-f", str(manifest), "--state-dir", str(state), *flags])
    return result.exit_code, result.output, state


def _stored_spec(state: Path) -> dict[str, object]:
    with LocalCluster(state / "cluster.db", SystemClock()) as cluster:
        return dict(cluster.get("apps/v1", "Deployment", "web", "default")["spec"])


def test_a_typo_is_refused_at_its_line_by_default(tmp_path: Path) -> None:
    code, output, state = _apply(tmp_path, MANIFEST)
    assert code == 1
    where = f"{tmp_path}/app.yaml:6"
    assert output == f"error: {where}: deployment.apps/web: spec.replica: unknown field\n"
    with LocalCluster(state / "cluster.db", SystemClock()) as cluster:
        assert cluster.list("apps/v1", "Deployment") == []


def test_warn_prints_the_unknown_field_and_stores_the_rest(tmp_path: Path) -> None:
    code, output, state = _apply(tmp_path, MANIFEST, "--validate=warn")
    assert code == 0, output
    assert f"warning: {tmp_path}/app.yaml:6: deployment.apps/web: spec.replica" in output
    assert "deployment.apps/web created" in output
    assert "replica" not in _stored_spec(state)


def test_ignore_stores_without_a_word(tmp_path: Path) -> None:
    code, output, state = _apply(tmp_path, MANIFEST, "--validate", "ignore")
    assert (code, output) == (0, "deployment.apps/web created\n")
    assert "replica" not in _stored_spec(state)


def test_wrong_types_are_refused_even_under_ignore(tmp_path: Path) -> None:
    text = MANIFEST.replace("replica: 3", "replicas: three").replace(
        "containers:\n      - name: main\n        image: web:1", 'containers: "nope"')
    code, output, _ = _apply(tmp_path, text, "--validate=ignore")
    assert code == 1
    assert output.splitlines() == [
        f'error: {tmp_path}/app.yaml:6: deployment.apps/web: spec.replicas: expected integer, '
        'got string "three"',
        f'error: {tmp_path}/app.yaml:13: deployment.apps/web: spec.template.spec.containers: '
        'expected array, got string "nope"',
    ]


def test_an_unknown_validate_value_is_one_line(tmp_path: Path) -> None:
    code, output, _ = _apply(tmp_path, MANIFEST, "--validate=sometimes")
    message = "error: --validate must be strict, warn or ignore, not 'sometimes'\n"
    assert (code, output) == (1, message)
