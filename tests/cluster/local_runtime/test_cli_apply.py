"""`headway apply -f` and `headway delete` on the store, without a running daemon."""

from __future__ import annotations

from pathlib import Path

from cluster.local_runtime.harness import headway

MANIFEST = """\
apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {MODE: fast}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: app, image: headway-demo/app:v1}]}
"""


def test_apply_get_delete(tmp_path: Path) -> None:
    manifest = tmp_path / "app.yaml"
    manifest.write_text(MANIFEST)
    state = tmp_path / "state"
    first = headway("apply", "-f", str(manifest), state=state)
    assert first.stdout.splitlines() == [
        "namespace/shop created",
        "configmap/settings created",
        "deployment.apps/web created",
    ]
    again = headway("apply", "-f", str(tmp_path), state=state)
    assert again.stdout.splitlines() == [
        "namespace/shop unchanged",
        "configmap/settings unchanged",
        "deployment.apps/web unchanged",
    ]
    assert "web" in headway("get", "deploy", "-n", "shop", state=state).stdout
    assert "settings" in headway("get", "cm", state=state).stdout
    assert (
        headway("delete", "configmap", "settings", state=state).stdout
        == 'configmap "settings" deleted\n'
    )
    gone = headway("get", "cm", "settings", state=state)
    assert gone.returncode == 1 and 'configmaps "settings" not found' in gone.stderr


def test_apply_reports_the_file_and_line_of_a_bad_document(tmp_path: Path) -> None:
    manifest = tmp_path / "bad.yaml"
    manifest.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok}\n---\nkind: [\n")
    result = headway("apply", "-f", str(manifest), state=tmp_path / "state")
    assert result.returncode == 1
    assert f"{manifest}:6: YAML syntax error" in result.stderr  # where libyaml stops


def test_apply_names_the_document_the_store_refuses(tmp_path: Path) -> None:
    manifest = tmp_path / "app.yaml"
    manifest.write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: nowhere}\n"
    )
    result = headway("apply", "-f", str(manifest), state=tmp_path / "state")
    assert result.returncode == 1
    assert result.stderr.startswith(f"error: {manifest}:1: configmap/x: ")


def test_apply_labels_an_object_without_a_name_as_such(tmp_path: Path) -> None:
    """Server-side apply needs a name (as Kubernetes'); the error said `configmap/`."""
    (tmp_path / "cm.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {generateName: web-}\ndata: {a: b}\n"
    )
    done = headway("apply", "-f", str(tmp_path / "cm.yaml"), state=tmp_path / "state")
    assert done.returncode == 1
    assert done.stderr.startswith(f"error: {tmp_path / 'cm.yaml'}:1: configmap/(no name): ")


def test_apply_takes_every_repeated_filename_in_order(tmp_path: Path) -> None:
    """`-f project.yml -f appset.yml -f pipeline.yml`, as a newcomer writes it after kubectl
    (docs/examples.md, gitops-environment-promotion): before, only the last file was applied
    and the others were dropped without a word."""
    first, second = tmp_path / "a.yml", tmp_path / "b.yml"
    first.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: one}\n")
    second.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: two}\n")
    state = tmp_path / "state"
    applied = headway("apply", "-f", str(first), "-f", str(second), state=state)
    assert applied.stdout.splitlines() == ["configmap/one created", "configmap/two created"]
    listed = headway("get", "cm", state=state).stdout
    assert "one" in listed and "two" in listed


def test_a_yaml_error_in_a_later_file_applies_nothing(tmp_path: Path) -> None:
    good, bad = tmp_path / "good.yml", tmp_path / "bad.yml"
    good.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: one}\n")
    bad.write_text("kind: [\n")
    state = tmp_path / "state"
    result = headway("apply", "-f", str(good), "-f", str(bad), state=state)
    assert result.returncode == 1 and f"{bad}:" in result.stderr
    assert "one" not in headway("get", "cm", state=state).stdout
