"""A kustomization file may leave out `apiVersion`: Kustomize reads it as
kustomize.config.k8s.io/v1beta1. argo-cd's test/e2e/testdata/kustomize-cm-gen (a
`configMapGenerator` and `kind: Kustomization`, no apiVersion) was reported by `headway
validate` as "Kustomization/<unnamed>: apiVersion: missing required field" and
"metadata.name: missing required field", and by `headway check` as HW003 twice. The files here
follow that shape in Headway's own words."""

from __future__ import annotations

from pathlib import Path

from headway.model.diagnostics import Severity
from headway.source.manifest_files import check_paths

NO_API_VERSION = """\
kind: Kustomization
configMapGenerator:
  - name: settings
    literals: [mode=fast]
"""


def _errors(root: Path) -> list[str]:
    report = check_paths([root])
    return [f"{d.field}: {d.message}" for d in report.diagnostics if d.severity is Severity.ERROR]


def test_a_kustomization_without_api_version_is_a_build_input(tmp_path: Path) -> None:
    (tmp_path / "kustomization.yaml").write_text(NO_API_VERSION)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "kustomization.yml").write_text("resources: [../app.yaml]\n")
    assert _errors(tmp_path) == []


def test_the_same_object_in_another_file_is_still_an_error(tmp_path: Path) -> None:
    (tmp_path / "settings.yaml").write_text(NO_API_VERSION)
    assert _errors(tmp_path) == [
        "apiVersion: missing required field",
        "metadata.name: missing required field",
    ]
