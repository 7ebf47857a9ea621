"""argocd-cm keys Argo CD acts on and Headway does not read are named, at their line.

Before: `headway validate` said nothing about an argocd-cm pasted from Argo CD's operator
manual, and `headway serve` dropped its `resource.exclusions`, system-wide ignoreDifferences,
`kustomize.buildOptions` and the rest without a word, so a user expecting them to act had no
sign that they did not.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
from headway.engine import health_registry
from headway.model.argocd_cm import unread_keys
from headway.model.diagnostics import Severity
from headway.model.validate import validate_text

ARGOCD_CM = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-cm
  namespace: argocd
data:
  url: https://argo.example.com
  dex.config: |
    connectors: []
  resource.customizations.health.example.com_Widget: |
    return {status = "Healthy"}
  resource.customizations.ignoreDifferences.apps_Deployment: |
    jsonPointers:
    - /spec/replicas
  resource.exclusions: |
    - apiGroups: ["cilium.io"]
      kinds: ["CiliumIdentity"]
      clusters: ["*"]
  application.resourceTrackingMethod: annotation
  kustomize.buildOptions: --enable-helm
  resource.customizations: |
    example.com/Gadget:
      health.lua: |
        return {status = "Healthy"}
      actions: |
        discovery.lua: return {}
"""


def test_validate_warns_at_each_unread_key_with_its_line() -> None:
    report = validate_text(ARGOCD_CM, "argocd-cm.yaml")
    found = [(d.line, d.field, d.severity) for d in report.diagnostics]
    assert found == [  # the system-wide ignore rule at line 12 is read (test_argocd_cm_diff.py)
        (15, 'data["resource.exclusions"]', Severity.WARNING),
        (20, 'data["kustomize.buildOptions"]', Severity.WARNING),
        (21, 'data["resource.customizations"]', Severity.WARNING),
    ]
    assert report.ok
    messages = [d.message for d in report.diagnostics]
    assert messages[2].startswith("example.com/Gadget: actions: ")


@pytest.mark.parametrize(
    ("key", "value", "unread"),
    [
        ("application.resourceTrackingMethod", "annotation", False),
        ("application.resourceTrackingMethod", "label", True),
        ("resource.customizations.useOpenLibs.example.com_Widget", "true", False),
        ("oidc.config", "issuer: x", False),
        ("timeout.reconciliation", "180s", True),
        ("resource.customizations.knownTypeFields.argoproj.io_Rollout", "- field: x", True),
        ("resource.customizations.ignoreDifferences.all", "jsonPointers: [/a]", False),
        ("resource.compareoptions", "ignoreAggregatedRoles: true", False),
    ],
)
def test_which_keys_are_unread(key: str, value: str, unread: bool) -> None:
    assert bool(unread_keys({key: value})) is unread


def test_other_config_maps_are_not_read_as_argocd_cm() -> None:
    text = ARGOCD_CM.replace("name: argocd-cm", "name: my-settings")
    assert validate_text(text, "settings.yaml").diagnostics == []


def test_serve_start_names_the_unread_keys(
    tmp_path: Path, clock: VirtualClock, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster = LocalCluster(tmp_path / "cluster.db", clock)
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "argocd"}}
    cluster.apply(namespace, field_manager="admin")
    cluster.apply(yaml.safe_load(ARGOCD_CM), field_manager="admin")
    registry = health_registry(cluster, None)
    printed = capsys.readouterr().out.splitlines()
    assert all(line.startswith("argocd-cm: ") for line in printed)
    assert [line.split(": ")[1] for line in printed] == [
        "resource.exclusions",
        "kustomize.buildOptions",
        "resource.customizations",
    ]
    assert registry.has_check(("example.com", "Widget"))


@pytest.mark.parametrize("name", ["argocd-cmd-params-cm", "argocd-rbac-cm"])
def test_argo_config_maps_headway_does_not_read_are_named(name: str) -> None:
    text = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  a: b\n"
    (diagnostic,) = validate_text(text, "cm.yaml").diagnostics
    assert (diagnostic.line, diagnostic.field) == (4, "metadata.name")
    assert diagnostic.severity is Severity.WARNING
    assert diagnostic.message.startswith("Headway reads nothing from this ConfigMap")


def test_the_prefixes_read_name_the_diff_settings_keys() -> None:
    """`argocd_cm` spells the diff's keys so that validating a ConfigMap imports no diff
    settings (jq, the Application model); they must stay the diff's own."""
    from headway.model import argocd_cm, argocd_diff

    assert argocd_diff.IGNORE_PREFIX in argocd_cm._READ_PREFIXES
    assert argocd_diff.COMPARE_OPTIONS_KEY in argocd_cm._READ_PREFIXES
