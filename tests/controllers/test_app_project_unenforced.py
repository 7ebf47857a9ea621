"""Project restrictions Headway cannot enforce are refused, not dropped.

Before: an AppProject from Argo CD's reference `project.yaml` with `signatureKeys` (or the
newer `sourceIntegrity`) or `permitOnlyProjectScopedClusters: true` validated cleanly and the
controller synced as if the field were absent: unsigned commits, and clusters not scoped to
the project. Now `headway validate` errors at the field, and an Application of that project
gets InvalidSpecError naming it and syncs nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from app_harness import APPS_NS, application, config_map, make_harness, manifests

from headway.clock import VirtualClock
from headway.controllers.app.controller import APP_API_VERSION
from headway.model.validate import validate_text

PROJECT = """\
apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata:
  name: shop
  namespace: argocd
spec:
  sourceRepos: ["*"]
  destinations: [{server: "https://kubernetes.default.svc", namespace: "*"}]
"""

RESTRICTIONS = {
    "signatureKeys": ("  signatureKeys: [{keyID: 4AEE18F83AFDEB23}]\n", 9),
    "sourceIntegrity": (
        "  sourceIntegrity:\n    git:\n      policies:\n"
        "      - repos: [{url: 'https://git.example/*'}]\n"
        "        gpg: {mode: strict, keys: [D56C4FCA57A46444]}\n",
        9,
    ),
    "permitOnlyProjectScopedClusters": ("  permitOnlyProjectScopedClusters: true\n", 9),
}


@pytest.mark.parametrize("field", sorted(RESTRICTIONS))
def test_validate_refuses_the_field_at_its_line(field: str) -> None:
    text, line = RESTRICTIONS[field]
    report = validate_text(PROJECT + text, "project.yaml")
    (diagnostic,) = report.diagnostics
    assert (diagnostic.line, diagnostic.field) == (line, f"spec.{field}")
    assert not report.ok
    assert "not supported by Headway yet" in diagnostic.message


@pytest.mark.parametrize(
    "text", ["  signatureKeys: []\n", "  permitOnlyProjectScopedClusters: false\n"]
)
def test_the_unrestricted_forms_are_accepted(text: str) -> None:
    assert validate_text(PROJECT + text, "project.yaml").diagnostics == []


def test_an_application_of_such_a_project_syncs_nothing(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("settings"))})
    project: dict[str, Any] = yaml.safe_load(PROJECT + RESTRICTIONS["signatureKeys"][0])
    h.store.apply(project, field_manager="admin")
    h.install(application("shop", h.remote.url, path="app", automated={}, project="shop"))
    status = h.run("shop", lambda s: bool(s.get("conditions")))
    (condition,) = status["conditions"]
    assert condition["type"] == "InvalidSpecError"
    assert f"AppProject {APPS_NS}/shop is invalid" in condition["message"]
    assert "spec.signatureKeys" in condition["message"]
    assert not h.exists("ConfigMap", "settings")
    assert h.store.get(APP_API_VERSION, "AppProject", "shop", APPS_NS)
