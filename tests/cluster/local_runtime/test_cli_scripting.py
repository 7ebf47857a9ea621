"""`headway apply -f -`, `get -A`, the control namespace on demand, and Events in order with
their age: what scripts written for kubectl and argocd expect of the store's CLI."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from typer.testing import CliRunner

from headway.cli.main import _register_all, app
from headway.clock import VirtualClock
from headway.cluster.events import record_event
from headway.cluster.local.api.store import LocalCluster

_register_all()
runner = CliRunner()

APPLICATION = """\
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: guestbook, namespace: argocd}
spec:
  project: default
  source: {repoURL: "https://example.com/repo.git", path: guestbook}
  destination: {server: "https://kubernetes.default.svc", namespace: default}
"""
CONFIGMAPS = """\
apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: shop}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
"""


def cli(state: Path, *args: str, stdin: str | None = None) -> tuple[int, str]:
    result = runner.invoke(app, [*args, "--state-dir", str(state)], input=stdin)
    return result.exit_code, result.output


def test_apply_reads_standard_input(tmp_path: Path) -> None:
    code, out = cli(tmp_path, "apply", "-f", "-", stdin=CONFIGMAPS)
    assert code == 0, out
    assert out.splitlines() == [
        "namespace/shop created", "configmap/settings created", "configmap/settings created"
    ]
    code, out = cli(tmp_path, "apply", "-f", "-", stdin="kind: [\n")
    assert code == 1 and "<stdin>:2: YAML syntax error" in out


def test_an_application_applies_before_serve_ever_ran(tmp_path: Path) -> None:
    code, out = cli(tmp_path, "apply", "-f", "-", stdin=APPLICATION)
    assert code == 0, out
    assert out.splitlines() == [
        "namespace/argocd created (Headway's control namespace)",
        "application.argoproj.io/guestbook created",
    ]
    code, out = cli(tmp_path, "apply", "-f", "-", stdin=APPLICATION)
    assert out == "application.argoproj.io/guestbook unchanged\n"


def test_get_all_namespaces_adds_the_namespace_column(tmp_path: Path) -> None:
    cli(tmp_path, "apply", "-f", "-", stdin=CONFIGMAPS)
    code, out = cli(tmp_path, "get", "cm", "-A")
    assert code == 0, out
    rows = [line.split()[:2] for line in out.splitlines()]
    assert rows == [["NAMESPACE", "NAME"], ["default", "settings"], ["shop", "settings"]]
    assert cli(tmp_path, "get", "cm")[1].splitlines()[1].split()[0] == "settings"  # only default
    assert cli(tmp_path, "get", "cm", "settings", "-A")[0] == 2


def test_events_of_one_second_keep_the_order_they_happened_in(tmp_path: Path) -> None:
    cli(tmp_path, "apply", "-f", "-", stdin=CONFIGMAPS)
    clock = VirtualClock(datetime(2026, 1, 1, tzinfo=UTC))
    steps = [f"step {n}" for n in range(8)]  # hashed Event names sort in another order
    with LocalCluster(tmp_path / "cluster.db", clock) as cluster:
        involved = cluster.get("v1", "ConfigMap", "settings", "default")
        for message in steps:
            record_event(cluster, clock, involved=involved, reason="Step", message=message)
    code, out = cli(tmp_path, "describe", "cm", "settings")
    assert code == 0, out
    events = out.split("Events:\n", 1)[1].splitlines()
    assert events[0].split() == ["TYPE", "REASON", "AGE", "MESSAGE"]
    assert [" ".join(line.split()[-2:]) for line in events[1:]] == steps
    assert all(line.split()[2].endswith("d") for line in events[1:])  # long ago, in days
    code, out = cli(tmp_path, "get", "events")
    assert [" ".join(line.split()[-2:]) for line in out.splitlines()[1:]] == steps
