"""The PromotionPipeline file: its views and defaults, and file:line:field errors."""

from __future__ import annotations

import textwrap

import pytest

from headway.model.key_paths import KeyPath, KeyPathError, ListMatch, parse_key_path
from headway.model.manifests import parse_manifest
from headway.model.promotion_pipeline import PromotionPipeline, TargetKind
from headway.model.validate import validate_text
from headway.model.yamlload import load_documents

GOOD = """\
apiVersion: headway.dev/v1alpha1
kind: PromotionPipeline
metadata:
  name: payments-api
spec:
  image: registry.example.com/payments-api
  environments:
    - name: dev
      application: payments-api-dev
      target:
        file: apps/payments-api/values-dev.yaml
        helm: {key: image.tag}
      autoPromote: true
    - name: staging
      application: payments-api-staging
      target:
        file: overlays/staging/kustomization.yaml
        kustomize: {name: payments-api}
      autoPromote: true
      healthyWithin: 15m
    - name: prod
      application: payments-api-prod
      target:
        file: prod/deployment.yaml
        manifest:
          kind: Deployment
          name: payments-api
          field: spec.template.spec.containers[name=api].image
      gate:
        approval: {required: true, approvers: [alice, bob], timeout: 30m}
        exempt: ['podAnnotations["headway.dev/nonce"]']
      hotfix:
        skipAnalysisKey: metadata.annotations["headway.dev/skip-analysis"]
        nonceKey: podAnnotations["headway.dev/nonce"]
"""


def parsed(text: str) -> PromotionPipeline:
    [document] = load_documents(text, "pipeline.yaml").documents
    view, diagnostics = parse_manifest(document)
    assert diagnostics == []
    assert isinstance(view, PromotionPipeline)
    return view


def errors(text: str) -> list[str]:
    return [str(d) for d in validate_text(textwrap.dedent(text), "pipeline.yaml").diagnostics]


def test_a_pipeline_reads_into_views_with_defaults() -> None:
    pipeline = parsed(GOOD)
    dev, staging, prod = pipeline.spec.environments
    assert [dev.target.kind, staging.target.kind, prod.target.kind] == list(TargetKind)
    assert dev.auto_promote and not dev.gate.approval.required
    assert dev.healthy_within == 600.0 and staging.healthy_within == 900.0
    assert dev.gate.approval.timeout == 3600.0 and dev.hotfix is None
    assert prod.gate.approval.approvers == ("alice", "bob") and prod.gate.approval.timeout == 1800
    assert staging.target.key == KeyPath(("images", ListMatch("name", "payments-api"), "newTag"))
    assert [str(k) for k in prod.automation_keys] == [
        "spec.template.spec.containers[name=api].image",
        'metadata.annotations["headway.dev/skip-analysis"]',
        'podAnnotations["headway.dev/nonce"]',
    ]
    assert pipeline.next_environment("staging") == prod
    assert pipeline.next_environment("prod") is None


BAD_CASES = {
    "approval without approvers": (
        GOOD.replace("approvers: [alice, bob], ", ""),
        "pipeline.yaml:30: PromotionPipeline/payments-api: "
        "spec.environments[2].gate.approval.approvers: an approval nobody may give can never "
        "pass: list the approvers",
    ),
    "exempting a hand-edited key": (
        GOOD.replace("exempt: ['podAnnotations", "exempt: ['env[0].value', 'podAnnotations"),
        "pipeline.yaml:31: PromotionPipeline/payments-api: spec.environments[2].gate.exempt[0]: "
        '"env[0].value" is not a key Headway writes here',
    ),
    "two targets": (
        GOOD.replace(
            "helm: {key: image.tag}", "helm: {key: image.tag}\n        kustomize: {name: x}"
        ),
        "pipeline.yaml:10: PromotionPipeline/payments-api: spec.environments[0].target: "
        "give exactly one of helm, kustomize, manifest (found: helm, kustomize)",
    ),
    "duplicate environment": (
        GOOD.replace("name: staging", "name: dev"),
        "pipeline.yaml:14: PromotionPipeline/payments-api: spec.environments[1].name: "
        '"dev" is already environment 0\'s name',
    ),
    "bad duration": (
        GOOD.replace("healthyWithin: 15m", "healthyWithin: soon"),
        "pipeline.yaml:20: PromotionPipeline/payments-api: spec.environments[1].healthyWithin:",
    ),
    "tag in the image": (
        GOOD.replace("payments-api\n  environments", "payments-api:v1\n  environments"),
        "pipeline.yaml:6: PromotionPipeline/payments-api: spec.image: "
        '"registry.example.com/payments-api:v1" names a tag or digest; give the repository',
    ),
    "file outside the repository": (
        GOOD.replace("file: prod/deployment.yaml", "file: ../prod/deployment.yaml"),
        "pipeline.yaml:24: PromotionPipeline/payments-api: spec.environments[2].target.file:",
    ),
    "unreadable key path": (
        GOOD.replace("helm: {key: image.tag}", "helm: {key: 'image..tag'}"),
        "pipeline.yaml:12: PromotionPipeline/payments-api: spec.environments[0].target.helm.key:",
    ),
    "wrong version": (
        GOOD.replace("headway.dev/v1alpha1", "headway.dev/v1"),
        "pipeline.yaml:1: PromotionPipeline/payments-api: apiVersion: "
        '"headway.dev/v1" is not served for PromotionPipeline; use headway.dev/v1alpha1',
    ),
    "missing application": (
        GOOD.replace("      application: payments-api-dev\n", ""),
        "pipeline.yaml:8: PromotionPipeline/payments-api: spec.environments[0].application: "
        "missing required field",
    ),
}


@pytest.mark.parametrize("case", BAD_CASES, ids=list(BAD_CASES))
def test_a_bad_pipeline_says_file_line_and_field(case: str) -> None:
    text, expected = BAD_CASES[case]
    found = errors(text)
    assert any(line.startswith(expected) for line in found), found


def test_a_good_pipeline_has_no_diagnostics() -> None:
    assert errors(GOOD) == []


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("image.tag", ("image", "tag")),
        ('podAnnotations["headway.dev/nonce"]', ("podAnnotations", "headway.dev/nonce")),
        ("containers[0].image", ("containers", 0, "image")),
        ("images[name=api].newTag", ("images", ListMatch("name", "api"), "newTag")),
    ],
)
def test_key_paths_read_and_print_back(text: str, parts: tuple[object, ...]) -> None:
    path = parse_key_path(text)
    assert path.parts == parts
    assert str(path) == text


@pytest.mark.parametrize("text", ["", "image..tag", "a[", 'a["x"', "a b"])
def test_unreadable_key_paths_are_refused(text: str) -> None:
    with pytest.raises(KeyPathError):
        parse_key_path(text)
