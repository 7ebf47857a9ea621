"""A JSON patch file beside a kustomization is Kustomize's input, not an object: `headway
validate` of christianh814/gitops-examples (commit 54ec4b1, e.g. bgdk/overlays/blue, whose
kustomization names `bgd-deployment.yaml` in `patchesJson6902`) reported 23 such files as
"expected a Kubernetes object (a mapping), got a list". The overlay here follows that shape."""

from __future__ import annotations

from pathlib import Path

from headway.model.diagnostics import Severity
from headway.source.manifest_files import check_paths

KUSTOMIZATION = """\
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources: [../../base]
patchesJson6902:
  - target: {group: apps, version: v1, kind: Deployment, name: web}
    path: web-colour.yaml
"""
PATCH = """\
- op: replace
  path: /spec/template/spec/containers/0/env/0/value
  value: blue
- op: add
  path: /metadata/labels/colour
  value: blue
"""


def _errors(root: Path) -> list[str]:
    report = check_paths([root])
    return [f"{d.file}: {d.message}" for d in report.diagnostics if d.severity is Severity.ERROR]


def test_a_json_patch_file_is_not_validated_as_an_object(tmp_path: Path) -> None:
    (tmp_path / "kustomization.yaml").write_text(KUSTOMIZATION)
    (tmp_path / "web-colour.yaml").write_text(PATCH)
    assert _errors(tmp_path) == []


def test_a_list_that_is_not_a_json_patch_is_still_an_error(tmp_path: Path) -> None:
    (tmp_path / "objects.yaml").write_text(
        "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n"
        "- op: replace\n  path: /x\n  value: 1\n"
    )
    (tmp_path / "typo.yaml").write_text("- op: replcae\n  path: /x\n  value: 1\n")
    assert len(_errors(tmp_path)) == 2
    assert all(
        "expected a Kubernetes object (a mapping), got a list" in e for e in _errors(tmp_path)
    )
