"""One entry point for any manifest: dispatch by (API group, kind) to the typed parser.

Argo kinds (`argoproj.io/v1alpha1`) get full views and validation; everything else becomes a
`K8sObject` with only apiVersion, kind and metadata.name checked.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from headway.model import (
    analysis,
    application,
    applicationset,
    appproject,
    k8s,
    promotion_pipeline,
    rollout,
)
from headway.model.diagnostics import Diagnostic
from headway.model.yamlload import Document

__all__ = [
    "ARGO_GROUP",
    "ARGO_VERSION",
    "PARSERS",
    "SERVED_VERSIONS",
    "Manifest",
    "ParseMemo",
    "is_object",
    "parse_manifest",
]

ARGO_GROUP = "argoproj.io"
ARGO_VERSION = "v1alpha1"

Manifest = (
    application.Application
    | appproject.AppProject
    | rollout.Rollout
    | analysis.AnalysisTemplate
    | analysis.AnalysisRun
    | promotion_pipeline.PromotionPipeline
    | k8s.K8sObject
)
Parser = Callable[[Document], tuple[Any, list[Diagnostic]]]

PARSERS: dict[tuple[str, str], Parser] = {
    (ARGO_GROUP, "Application"): application.parse_application,
    (ARGO_GROUP, "AppProject"): appproject.parse_appproject,
    (ARGO_GROUP, "ApplicationSet"): applicationset.parse_application_set,
    (ARGO_GROUP, "Rollout"): rollout.parse_rollout,
    (ARGO_GROUP, "AnalysisTemplate"): analysis.parse_analysis_template,
    (ARGO_GROUP, "ClusterAnalysisTemplate"): analysis.parse_analysis_template,
    (ARGO_GROUP, "AnalysisRun"): analysis.parse_analysis_run,
    (
        promotion_pipeline.PIPELINE_GROUP,
        promotion_pipeline.PIPELINE_KIND,
    ): promotion_pipeline.parse_promotion_pipeline,
}
# The one version each group's kinds are served at (Argo's kinds and Headway's own).
SERVED_VERSIONS = {ARGO_GROUP: ARGO_VERSION, promotion_pipeline.PIPELINE_GROUP: "v1alpha1"}


# Build inputs that look like objects but are never applied (kustomization.yaml files).
NOT_APPLIED_GROUPS = frozenset({"kustomize.config.k8s.io"})


def is_object(document: Document) -> bool:
    """Whether a document means to be a Kubernetes object (it says apiVersion or kind).

    Helm values files and other plain data in a GitOps tree say neither, and Kustomize's own
    files are build inputs; both are skipped.
    """
    obj = document.obj
    if not isinstance(obj, dict):
        return True
    api_version = obj.get("apiVersion")
    if isinstance(api_version, str) and k8s.split_api_version(api_version)[0] in NOT_APPLIED_GROUPS:
        return False
    return "apiVersion" in obj or "kind" in obj


@dataclass
class ParseMemo:
    """Each kind parser's answer once per document, for readers that ask again (`headway
    check` validates every document, then its drill rule reads the Rollouts and templates).
    Documents are held, so their ids stay their own; their objects must not change."""

    _answers: dict[tuple[int, Parser], tuple[Document, Any, tuple[Diagnostic, ...]]] = field(
        default_factory=dict
    )

    def parse(self, parser: Parser, document: Document) -> tuple[Any, list[Diagnostic]]:
        key = (id(document), parser)
        known = self._answers.get(key)
        if known is None:
            view, diagnostics = parser(document)
            known = self._answers[key] = (document, view, tuple(diagnostics))
        return known[1], list(known[2])


def parse_manifest(
    document: Document, *, memo: ParseMemo | None = None
) -> tuple[Manifest | None, list[Diagnostic]]:
    """The typed view of any object and its diagnostics; the view is None on any error.
    With `memo`, a kind parser runs once per document."""
    obj = document.obj
    api_version = obj.get("apiVersion") if isinstance(obj, dict) else None
    kind = obj.get("kind") if isinstance(obj, dict) else None
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return k8s.parse_object(document)
    group, version = k8s.split_api_version(api_version)
    parser = PARSERS.get((group, kind))
    if parser is None:
        return k8s.parse_object(document)
    if version != SERVED_VERSIONS[group]:
        served = f"{group}/{SERVED_VERSIONS[group]}"
        message = f'"{api_version}" is not served for {kind}; use {served}'
        return None, [document.diagnostic(("apiVersion",), message)]
    view, diagnostics = parser(document) if memo is None else memo.parse(parser, document)
    return view, diagnostics
