"""A Helm chart repository's index.yaml is not a Kubernetes object: `headway validate` of
argo-cd's test/e2e/testdata (whose helm-repo/ directories are chart repositories the e2e tests
serve) reported each index.yaml as "kind: missing required field" and "metadata.name: missing
required field", and `headway check` as HW003 twice each. The index here has what Helm needs
of one (theirs are written by hand, without `generated`)."""

from __future__ import annotations

from pathlib import Path

from headway.model.diagnostics import Severity
from headway.source.manifest_files import check_paths

INDEX = """\
apiVersion: v1
entries:
  web:
  - apiVersion: v2
    name: web
    version: 1.2.0
    urls: [web-1.2.0.tgz]
    digest: 0f3c
    created: "2026-01-05T10:00:00Z"
"""


def _errors(root: Path) -> list[str]:
    report = check_paths([root])
    return [f"{d.field}: {d.message}" for d in report.diagnostics if d.severity is Severity.ERROR]


def test_a_helm_repository_index_is_not_validated_as_an_object(tmp_path: Path) -> None:
    (tmp_path / "index.yaml").write_text(INDEX)
    assert _errors(tmp_path) == []


def test_an_object_missing_its_kind_is_still_an_error(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text("apiVersion: v1\nmetadata: {name: web}\ndata: {}\n")
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "index.yaml").write_text("apiVersion: v1\nmetadata: {name: a}\n")
    assert _errors(tmp_path) == ["kind: missing required field"] * 2
