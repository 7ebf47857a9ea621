"""`headway check` on Applications whose source is a chart from a Helm repository: it stays
offline (the repository is never asked), reports the source as not checked (HW002), and
renders the chart from a local checkout mapped under `repositories`."""

from __future__ import annotations

import json
import tarfile
from collections.abc import Iterator
from io import BytesIO
from pathlib import Path

import pytest
from typer.testing import CliRunner

from check.gitrepo import commit_states
from headway.cli.main import _register_all, app
from source.helm_repo_server import ChartRepoServer, chart_archive

_register_all()
runner = CliRunner()

APPLICATION = """apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: web
  namespace: argocd
spec:
  project: default
  sources:
    - repoURL: {url}
      chart: web
      targetRevision: 1.*
      helm:
        valueFiles: [values-prod.yaml]
  destination:
    server: https://kubernetes.default.svc
    namespace: web
"""


@pytest.fixture
def server() -> Iterator[ChartRepoServer]:
    repo = ChartRepoServer()
    repo.publish(chart_archive("web", "1.0.0"))
    yield repo
    repo.stop()


def _findings(*args: str) -> list[dict[str, str]]:
    result = runner.invoke(app, ["check", *args, "--format", "json"])
    assert result.exit_code in (0, 1), result.output
    return list(json.loads(result.output))


def _repo(tmp_path: Path, url: str) -> Path:
    state = tmp_path / "state"
    (state / "apps").mkdir(parents=True)
    (state / "apps" / "web.yaml").write_text(APPLICATION.format(url=url))
    root = tmp_path / "repo"
    root.mkdir()
    commit_states(root, state)
    return root


def test_an_unmapped_chart_repository_is_reported_and_never_contacted(
    tmp_path: Path, server: ChartRepoServer
) -> None:
    findings = _findings(str(_repo(tmp_path, server.url)))
    unresolved = [f for f in findings if f["rule"] == "HW002"]
    assert len(unresolved) == 1 and server.url in unresolved[0]["message"]
    assert "its manifests were not checked" in unresolved[0]["message"]
    assert server.requests == []


def test_a_chart_repository_mapped_to_a_local_checkout_renders_offline(
    tmp_path: Path, server: ChartRepoServer
) -> None:
    checkout = tmp_path / "charts-checkout"
    with tarfile.open(fileobj=BytesIO(chart_archive("web", "1.0.0").data)) as archive:
        archive.extractall(checkout, filter="data")
    (checkout / "web" / "values-prod.yaml").write_text("release: 7\n")
    config = tmp_path / "check.yaml"
    config.write_text(f"repositories:\n  {server.url}: {checkout}\n")
    root = _repo(tmp_path, server.url)
    findings = _findings(str(root), "--config", str(config))
    assert [f for f in findings if f["rule"] == "HW002"] == []
    assert server.requests == []
    (checkout / "web" / "values-prod.yaml").unlink()  # now the chart cannot render
    missing = [f for f in _findings(str(root), "--config", str(config)) if f["rule"] == "HW002"]
    assert len(missing) == 1 and "values-prod.yaml" in missing[0]["message"]
