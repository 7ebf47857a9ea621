"""`headway get`, `describe` and `logs` on the store, without a running daemon: bad input."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from cluster.store_bypass import force_field
from headway.cli.main import _register_all, app
from headway.clock import SystemClock
from headway.cluster.events import record_event
from headway.cluster.local.api.store import LocalCluster

_register_all()
runner = CliRunner()

POD = """\
apiVersion: v1
kind: Pod
metadata: {name: web, labels: {app: web, tier: front}}
spec: {containers: [{name: app, image: a:1}, {name: sidecar, image: b:1}]}
"""


def _store_with_pod(tmp_path: Path) -> Path:
    manifest = tmp_path / "pod.yaml"
    manifest.write_text(POD)
    state = tmp_path / "state"
    applied = runner.invoke(app, ["apply", "-f", str(manifest), "--state-dir", str(state)])
    assert applied.exit_code == 0, applied.output
    return state


def test_unknown_output_format_is_a_usage_error(tmp_path: Path) -> None:
    state = _store_with_pod(tmp_path)
    result = runner.invoke(app, ["get", "pods", "-o", "jsno", "--state-dir", str(state)])
    assert result.exit_code == 2
    assert "'jsno' is not one of: yaml, json, wide" in result.output
    assert "web" not in result.output.split("Error")[0]  # no table printed


def test_logs_names_a_container_that_is_not_in_the_pod(tmp_path: Path) -> None:
    state = _store_with_pod(tmp_path)
    result = runner.invoke(app, ["logs", "web", "-c", "nope", "--state-dir", str(state)])
    assert result.exit_code == 1
    assert 'container "nope" is not in pod web; choose one of: app, sidecar' in result.output
    unnamed = runner.invoke(app, ["logs", "web", "--state-dir", str(state)])
    assert unnamed.exit_code == 1
    assert "a container name must be specified for pod web" in unnamed.output


def test_describe_prints_labels_as_key_value_pairs(tmp_path: Path) -> None:
    state = _store_with_pod(tmp_path)
    result = runner.invoke(app, ["describe", "pod", "web", "--state-dir", str(state)])
    assert result.exit_code == 0, result.output
    assert "Labels:       app=web,tier=front\n" in result.output


def test_describe_keeps_a_long_event_reason_apart_from_its_count(tmp_path: Path) -> None:
    state = _store_with_pod(tmp_path)
    with LocalCluster(state / "cluster.db", SystemClock()) as cluster:
        pod = cluster.get("v1", "Pod", "web", "default")
        record_event(
            cluster,
            SystemClock(),
            involved=pod,
            reason="RolloutStepCompleted",
            message="step 1/2 completed",
            event_type="Normal",
            component="test",
        )
    result = runner.invoke(app, ["describe", "pod", "web", "--state-dir", str(state)])
    line = result.output.splitlines()[-1].split()
    assert line[:2] == ["Normal", "RolloutStepCompleted"] and line[2].endswith("s")
    assert line[3:] == ["step", "1/2", "completed"]


def test_apply_refuses_a_document_that_is_not_an_object(tmp_path: Path) -> None:
    manifest = tmp_path / "mixed.yaml"
    manifest.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\n- a list\n")
    state = tmp_path / "state"
    result = runner.invoke(app, ["apply", "-f", str(manifest), "--state-dir", str(state)])
    assert result.exit_code == 1
    assert f"{manifest}:5: expected a Kubernetes object (a mapping), got a list" in result.output
    assert "created" not in result.output  # nothing applied from a file with an error


def test_an_empty_cluster_scoped_list_names_no_namespace(tmp_path: Path) -> None:
    state = _store_with_pod(tmp_path)
    result = runner.invoke(app, ["get", "crd", "-n", "shop", "--state-dir", str(state)])
    assert result.exit_code == 0, result.output
    assert result.output == "No resources found.\n"


def test_apply_to_a_state_dir_that_is_a_file_is_a_usage_error(tmp_path: Path) -> None:
    manifest = tmp_path / "pod.yaml"
    manifest.write_text(POD)
    a_file = tmp_path / "state"
    a_file.write_text("")
    result = runner.invoke(app, ["apply", "-f", str(manifest), "--state-dir", str(a_file)])
    assert result.exit_code == 2
    assert "is a file" in " ".join(result.output.replace("│", " ").split())


def test_a_field_conflict_says_how_to_take_the_fields_over(tmp_path: Path) -> None:
    state = _store_with_pod(tmp_path)
    theirs = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "default"},
        "data": {"k": "git"},
    }
    with LocalCluster(state / "cluster.db", SystemClock()) as cluster:
        cluster.apply(theirs, field_manager="some-controller")
    manifest = tmp_path / "cm.yaml"
    manifest.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {k: mine}\n")
    args = ["apply", "-f", str(manifest), "--state-dir", str(state)]
    refused = runner.invoke(app, args)
    assert refused.exit_code == 1
    assert "(owned by some-controller); re-run with --force-conflicts" in refused.output
    forced = runner.invoke(app, [*args, "--force-conflicts"])
    assert forced.exit_code == 0, forced.output
    assert forced.output == "configmap/c configured\n"


def test_get_events_shows_what_happened_to_what_one_line_each(tmp_path: Path) -> None:
    state = _store_with_pod(tmp_path)
    with LocalCluster(state / "cluster.db", SystemClock()) as cluster:
        pod = cluster.get("v1", "Pod", "web", "default")
        for _ in range(2):
            record_event(
                cluster,
                SystemClock(),
                involved=pod,
                reason="RouterError",
                message="haproxy exited:\n[ALERT] bad config",
                event_type="Warning",
                component="test",
            )
    result = runner.invoke(app, ["get", "events", "--state-dir", str(state)])
    assert result.exit_code == 0, result.output
    header, row = result.output.splitlines()
    assert header.split() == ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert row.split()[1:] == [
        "Warning",
        "RouterError",
        "pod/web",
        "haproxy",
        "exited:",
        "[ALERT]",
        "bad",
        "config",
        "(x2)",
    ]


def test_apply_of_a_file_that_is_not_text_is_one_line(tmp_path: Path) -> None:
    binary = tmp_path / "image.yaml"
    binary.write_bytes(b"\xe5\x00\xff binary")
    result = runner.invoke(app, ["apply", "-f", str(binary), "--state-dir", str(tmp_path / "s")])
    assert result.exit_code == 1
    assert result.output == f"error: {binary}:1: not UTF-8 text\n"


def test_a_malformed_object_does_not_hide_the_others_in_a_table(tmp_path: Path) -> None:
    manifest = tmp_path / "svc.yaml"
    manifest.write_text(
        "apiVersion: v1\nkind: Service\nmetadata: {name: bad}\nspec: {ports: [{port: 1}]}\n---\n"
        "apiVersion: v1\nkind: Service\nmetadata: {name: good}\nspec: {ports: [{port: 80}]}\n"
    )
    state = tmp_path / "state"
    assert (
        runner.invoke(app, ["apply", "-f", str(manifest), "--state-dir", str(state)]).exit_code == 0
    )
    force_field(state / "cluster.db", kind="Service", name="bad", path="$.spec.ports", value=5)
    result = runner.invoke(app, ["get", "svc", "--state-dir", str(state)])
    assert result.exit_code == 0, result.output
    rows = [line.split() for line in result.output.splitlines()[1:]]
    assert rows[0][:3] == ["bad", "<invalid>", "<invalid>"]
    assert rows[1][0] == "good" and rows[1][2] == "80"
