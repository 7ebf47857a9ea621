"""One entry point for any manifest: dispatch by (API group, kind) to the typed parser.

Argo kinds (`argoproj.io/v1alpha1`) get full views and validation; everything else becomes a
`K8sObject` with only apiVersion, kind and metadata.name checked.

A kind's typed model is imported the first time a document of that kind is parsed (the
`PARSER_LOADERS` table), not with this module: a repository of plain manifests never loads
the Rollout, ApplicationSet or PromotionPipeline models, nor croniter for AppProject sync
windows, which is most of what `headway validate` and `headway check` would spend starting.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from headway.model import k8s
from headway.model.diagnostics import Diagnostic
from headway.model.yamlload import Document

if TYPE_CHECKING:  # the typed models load by kind, in the loaders below
    from headway.model import (
        analysis,
        application,
        appproject,
        promotion_pipeline,
        rollout,
    )

__all__ = [
    "ARGO_GROUP",
    "ARGO_VERSION",
    "PARSER_LOADERS",
    "SERVED_VERSIONS",
    "ParseMemo",
    "is_object",
    "parse_manifest",
]

ARGO_GROUP = "argoproj.io"
ARGO_VERSION = "v1alpha1"
# `promotion_pipeline.PIPELINE_GROUP` and `PIPELINE_KIND`, spelt here so that dispatch does
# not import the pipeline model; a test holds them equal.
_PIPELINE_GROUP = "headway.dev"
_PIPELINE_KIND = "PromotionPipeline"

if TYPE_CHECKING:
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


def _application() -> Parser:
    from headway.model import application

    return application.parse_application


def _appproject() -> Parser:
    from headway.model import appproject

    return appproject.parse_appproject


def _application_set() -> Parser:
    from headway.model import applicationset

    return applicationset.parse_application_set


def _rollout() -> Parser:
    from headway.model import rollout

    return rollout.parse_rollout


def _analysis_template() -> Parser:
    from headway.model import analysis

    return analysis.parse_analysis_template


def _analysis_run() -> Parser:
    from headway.model import analysis

    return analysis.parse_analysis_run


def _promotion_pipeline() -> Parser:
    from headway.model import promotion_pipeline

    return promotion_pipeline.parse_promotion_pipeline


# Each typed kind's parser, behind a function that imports its model when first asked.
PARSER_LOADERS: dict[tuple[str, str], Callable[[], Parser]] = {
    (ARGO_GROUP, "Application"): _application,
    (ARGO_GROUP, "AppProject"): _appproject,
    (ARGO_GROUP, "ApplicationSet"): _application_set,
    (ARGO_GROUP, "Rollout"): _rollout,
    (ARGO_GROUP, "AnalysisTemplate"): _analysis_template,
    (ARGO_GROUP, "ClusterAnalysisTemplate"): _analysis_template,
    (ARGO_GROUP, "AnalysisRun"): _analysis_run,
    (_PIPELINE_GROUP, _PIPELINE_KIND): _promotion_pipeline,
}
# The one version each group's kinds are served at (Argo's kinds and Headway's own).
SERVED_VERSIONS = {ARGO_GROUP: ARGO_VERSION, _PIPELINE_GROUP: "v1alpha1"}
_loaded_parsers: dict[tuple[str, str], Parser] = {}


def _typed_parser(group: str, kind: str) -> Parser:
    """The parser of a kind in `PARSER_LOADERS`, its model imported the first time."""
    parser = _loaded_parsers.get((group, kind))
    if parser is None:
        parser = _loaded_parsers[group, kind] = PARSER_LOADERS[group, kind]()
    return parser


# Build inputs that look like objects but are never applied (kustomization.yaml files).
NOT_APPLIED_GROUPS = frozenset({"kustomize.config.k8s.io"})
# The names Kustomize reads a kustomization from; such a file may leave out `apiVersion` (and
# `kind`), which Kustomize then takes as kustomize.config.k8s.io/v1beta1 Kustomization.
_KUSTOMIZATION_NAMES = frozenset({"kustomization.yaml", "kustomization.yml", "Kustomization"})


def is_object(document: Document) -> bool:
    """Whether a document means to be a Kubernetes object (it says apiVersion or kind).

    Helm values files and other plain data in a GitOps tree say neither, and Kustomize's own
    files are build inputs (with or without their optional `apiVersion`); both are skipped,
    and so are a Helm repository's index and a JSON patch (a list of RFC 6902 operations,
    what a kustomization's `patchesJson6902` or `patches` entry names by `path`). Any other
    list is an object that went wrong, and validation says so.
    """
    obj = document.obj
    if isinstance(obj, list):
        return not _is_json_patch(obj)
    if not isinstance(obj, dict):
        return True
    api_version = obj.get("apiVersion")
    if isinstance(api_version, str) and k8s.split_api_version(api_version)[0] in NOT_APPLIED_GROUPS:
        return False
    if api_version is None and document.file.rpartition("/")[2] in _KUSTOMIZATION_NAMES:
        return False
    if _is_helm_repository_index(document.file, obj):
        return False
    return "apiVersion" in obj or "kind" in obj


def _is_helm_repository_index(file: str, obj: dict[str, Any]) -> bool:
    """A Helm chart repository's `index.yaml` (`apiVersion: v1` and `entries` by chart name,
    all Helm needs of it): it says apiVersion but no kind, and is no object."""
    name = file.rpartition("/")[2]
    return name == "index.yaml" and "kind" not in obj and isinstance(obj.get("entries"), dict)


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
    if (group, kind) not in PARSER_LOADERS:
        return k8s.parse_object(document)
    if version != SERVED_VERSIONS[group]:
        served = f"{group}/{SERVED_VERSIONS[group]}"
        message = f'"{api_version}" is not served for {kind}; use {served}'
        return None, [document.diagnostic(("apiVersion",), message)]
    parser = _typed_parser(group, kind)
    view, diagnostics = parser(document) if memo is None else memo.parse(parser, document)
    return view, diagnostics


_JSON_PATCH_OPS = frozenset({"add", "remove", "replace", "move", "copy", "test"})


def _is_json_patch(items: list[object]) -> bool:
    """A non-empty list of RFC 6902 operations: each `{op, path, ...}` with a known op."""
    return bool(items) and all(
        isinstance(item, dict)
        and item.get("op") in _JSON_PATCH_OPS
        and isinstance(item.get("path"), str)
        for item in items
    )
