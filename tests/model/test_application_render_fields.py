"""`helm` / `kustomize` fields Headway's renderers refuse are named by `headway validate`.

Before: an Application copied from Argo CD's reference `application.yaml` with, say,
`kustomize.labelWithoutSelector` or `helm.fileParameters` validated cleanly; only a render
(`headway check`, or the controller) failed, with a message naming no file, line or field.
Now validate errors at the field's line, from the same table the renderers read.
"""

from __future__ import annotations

import pytest
import yaml

from headway.model.diagnostics import Severity
from headway.model.support import KUSTOMIZE_RENDERED_FIELDS, refused_source_fields
from headway.model.validate import validate_text
from headway.source.errors import RenderError
from headway.source.render_kustomize import apply_overrides

APPLICATION = """\
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {{name: shop, namespace: argocd}}
spec:
  project: shop
  destination: {{server: "https://kubernetes.default.svc", namespace: shop}}
  sources:
  - repoURL: https://git.example/shop.git
    path: app
    {tool}:
      {field}: {value}
"""

# Fields of Argo CD's ApplicationSourceHelm / ApplicationSourceKustomize (v3.x).
ARGO_KUSTOMIZE_FIELDS = {
    "namePrefix": "p-", "nameSuffix": "-s", "namespace": "shop", "images": "[web:1.2]",
    "replicas": "[{name: web, count: 2}]", "commonLabels": "{team: a}",
    "commonAnnotations": "{team: a}", "forceCommonLabels": "true",
    "forceCommonAnnotations": "true", "patches": "[]", "components": "[../c]",
    "commonAnnotationsEnvsubst": "true", "labelWithoutSelector": "true",
    "labelIncludeTemplates": "true", "ignoreMissingComponents": "true", "version": "v5",
    "kubeVersion": "'1.30'", "apiVersions": "[v1]",
}  # fmt: skip
ARGO_HELM_REFUSED = {
    "fileParameters": "[{name: cert, path: files/cert.pem}]",
    "skipSchemaValidation": "true",
    "kubeVersion": "'1.30'",
    "apiVersions": "[v1]",
}


@pytest.mark.parametrize("field", sorted(ARGO_KUSTOMIZE_FIELDS))
def test_validate_names_exactly_the_kustomize_fields_the_render_refuses(field: str) -> None:
    value = ARGO_KUSTOMIZE_FIELDS[field]
    text = APPLICATION.format(tool="kustomize", field=field, value=value)
    report = validate_text(text, "app.yaml")
    spec = yaml.safe_load(text)["spec"]["sources"][0]["kustomize"]
    try:
        apply_overrides({"resources": ["web.yaml"]}, spec)
        refused = False
    except RenderError:
        refused = True
    flagged = [(d.line, d.field) for d in report.diagnostics]
    assert flagged == ([(11, f"spec.sources[0].kustomize.{field}")] if refused else [])
    assert refused is (field not in KUSTOMIZE_RENDERED_FIELDS)


@pytest.mark.parametrize("field", sorted(ARGO_HELM_REFUSED))
def test_validate_names_helm_fields_the_render_refuses(field: str) -> None:
    text = APPLICATION.format(tool="helm", field=field, value=ARGO_HELM_REFUSED[field])
    (diagnostic,) = validate_text(text, "app.yaml").diagnostics
    assert (diagnostic.line, diagnostic.field) == (11, f"spec.sources[0].helm.{field}")
    assert diagnostic.message.startswith("not supported by Headway yet")


def test_a_single_source_is_checked_too() -> None:
    text = APPLICATION.format(tool="helm", field="skipSchemaValidation", value="true")
    text = text.replace("  sources:\n  - repoURL", "  source:\n    repoURL")
    (diagnostic,) = validate_text(text, "app.yaml").diagnostics
    assert diagnostic.field == "spec.source.helm.skipSchemaValidation"


def test_a_source_ignored_because_sources_is_set_is_not_checked() -> None:
    text = APPLICATION.format(tool="helm", field="releaseName", value="shop")
    text += "  source:\n    repoURL: https://git.example/x.git\n    helm: {kubeVersion: '1.30'}\n"
    fields = [d.field for d in validate_text(text, "app.yaml").diagnostics]
    assert fields == ["spec.source"]


@pytest.mark.parametrize(
    ("tool", "field", "nearest"),
    [("helm", "release", "releaseName"), ("kustomize", "namePrefx", "namePrefix")],
)
def test_a_misspelt_field_is_one_error_naming_the_nearest_and_argos_silence(
    tool: str, field: str, nearest: str
) -> None:
    """aws-samples/eks-blueprints-add-ons' README writes `helm: {release: add-ons}`, which is
    not an Argo CD field. validate said both "unknown field (did you mean releaseName?); it is
    ignored" (a warning) and "not supported by Headway yet: the render refuses the
    Application" (an error) at that line; the render (check's HW002) said "helm: release not
    supported by Headway", as if it were an Argo CD feature Headway lacked."""
    text = APPLICATION.format(tool=tool, field=field, value="x")
    (diagnostic,) = validate_text(text, "app.yaml").diagnostics
    assert (diagnostic.line, diagnostic.field) == (11, f"spec.sources[0].{tool}.{field}")
    assert diagnostic.severity is Severity.ERROR
    assert diagnostic.message == (
        f"unknown field (did you mean {nearest}?): Argo CD would ignore it; the render refuses "
        "the Application rather than drop it"
    )
    refused = refused_source_fields(tool, {field: "x", "kubeVersion": "1.30"})
    assert refused == (
        f"{tool}: {field} is not an Argo CD {tool} field (did you mean {nearest}?), which Argo "
        "CD would drop unseen; kubeVersion not supported by Headway"
    )
