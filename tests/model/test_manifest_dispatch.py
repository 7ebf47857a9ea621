"""`parse_manifest` dispatches each typed kind to the parser its model defines, importing the
model the first time a document of that kind is parsed. The laziness is structural: each case
parses in a fresh interpreter and reads `sys.modules` (no timing)."""

from __future__ import annotations

import pytest
from model_helpers import document

from headway.model import (
    analysis,
    application,
    applicationset,
    appproject,
    manifests,
    promotion_pipeline,
    rollout,
)
from import_probe import run_python

ARGO = manifests.ARGO_GROUP
EXPECTED_PARSERS = {
    (ARGO, "Application"): application.parse_application,
    (ARGO, "AppProject"): appproject.parse_appproject,
    (ARGO, "ApplicationSet"): applicationset.parse_application_set,
    (ARGO, "Rollout"): rollout.parse_rollout,
    (ARGO, "AnalysisTemplate"): analysis.parse_analysis_template,
    (ARGO, "ClusterAnalysisTemplate"): analysis.parse_analysis_template,
    (ARGO, "AnalysisRun"): analysis.parse_analysis_run,
    (
        promotion_pipeline.PIPELINE_GROUP,
        promotion_pipeline.PIPELINE_KIND,
    ): promotion_pipeline.parse_promotion_pipeline,
}


def test_each_kind_loads_the_parser_its_model_defines() -> None:
    loaded = {key: load() for key, load in manifests.PARSER_LOADERS.items()}
    assert loaded == EXPECTED_PARSERS


def test_each_group_is_served_at_its_models_version() -> None:
    assert manifests.SERVED_VERSIONS == {
        ARGO: manifests.ARGO_VERSION,
        promotion_pipeline.PIPELINE_GROUP: promotion_pipeline.PIPELINE_VERSION,
    }


def test_a_memo_shares_one_answer_between_dispatch_and_the_kinds_own_parser() -> None:
    """The drill rule asks `rollout.parse_rollout` for what validation parsed by dispatch;
    both must find the one memoised answer (the memo keys by the parser itself)."""
    rollout_document = document(
        """\
        apiVersion: argoproj.io/v1alpha1
        kind: Rollout
        metadata: {name: web}
        spec:
          selector: {matchLabels: {app: web}}
          template:
            metadata: {labels: {app: web}}
            spec: {containers: [{name: web, image: "web:1"}]}
          strategy: {canary: {steps: [{setWeight: 20}]}}
        """
    )
    memo = manifests.ParseMemo()
    dispatched, _ = manifests.parse_manifest(rollout_document, memo=memo)
    direct, _ = memo.parse(rollout.parse_rollout, rollout_document)
    assert isinstance(dispatched, rollout.Rollout)
    assert direct is dispatched


# Every typed model (and croniter, which the AppProject model uses for sync windows' schedules).
TYPED_MODELS = frozenset(
    f"headway.model.{name}"
    for name in (
        "analysis",
        "application",
        "applicationset",
        "appproject",
        "promotion_pipeline",
        "rollout",
    )
) | {"croniter"}

_PARSE_IN_A_FRESH_INTERPRETER = """
import sys
from headway.model import manifests
from headway.model.yamlload import load_documents
loaded = load_documents(sys.argv[1], "m.yaml")
before = set(sys.modules)
view, diagnostics = manifests.parse_manifest(loaded.documents[0])
report = {
    "before": sorted(before),
    "view": type(view).__name__,
    "diagnostics": [str(d) for d in diagnostics],
}
"""


def _parse_fresh(text: str) -> dict[str, list[str] | str]:
    run = run_python(_PARSE_IN_A_FRESH_INTERPRETER, text)
    return {**run.report, "after": sorted(run.modules)}


def _typed_models(modules: list[str] | str) -> set[str]:
    return {m for m in modules if m in TYPED_MODELS}


@pytest.mark.parametrize(
    ("group", "kind", "model"),
    [
        (ARGO, "Application", "headway.model.application"),
        (ARGO, "AppProject", "headway.model.appproject"),
        (ARGO, "ApplicationSet", "headway.model.applicationset"),
        (ARGO, "Rollout", "headway.model.rollout"),
        (ARGO, "ClusterAnalysisTemplate", "headway.model.analysis"),
        (ARGO, "AnalysisRun", "headway.model.analysis"),
        ("headway.dev", "PromotionPipeline", "headway.model.promotion_pipeline"),
    ],
)
def test_a_kinds_model_is_imported_when_a_document_of_that_kind_is_parsed(
    group: str, kind: str, model: str
) -> None:
    report = _parse_fresh(f"apiVersion: {group}/v1alpha1\nkind: {kind}\nmetadata: {{}}\n")
    assert _typed_models(report["before"]) == set()
    assert model in report["after"]
    assert report["diagnostics"]  # no name and no spec: the kind's own parser said so


def test_a_plain_object_imports_no_typed_model() -> None:
    report = _parse_fresh("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n")
    assert report["view"] == "K8sObject"
    assert report["diagnostics"] == []
    assert _typed_models(report["after"]) == set()


def test_an_unserved_version_is_refused_before_the_kinds_model_loads() -> None:
    report = _parse_fresh("apiVersion: argoproj.io/v1beta1\nkind: Rollout\nmetadata: {}\n")
    assert report["diagnostics"] == [
        'm.yaml:1: Rollout/<unnamed>: apiVersion: "argoproj.io/v1beta1" is not served for Rollout; '
        "use argoproj.io/v1alpha1"
    ]
    assert _typed_models(report["after"]) == set()


_PROJECT = """\
apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: {name: shop}
spec:
  destinations: [{server: "https://kubernetes.default.svc", namespace: shop}]
"""


def test_a_project_without_sync_windows_does_not_import_croniter() -> None:
    report = _parse_fresh(_PROJECT)
    assert report["view"] == "AppProject"
    assert report["diagnostics"] == []
    assert "headway.model.appproject" in report["after"]
    assert "croniter" not in report["after"]


def test_a_sync_windows_schedule_is_checked_with_croniter() -> None:
    """The counterpart: croniter loads for a window's schedule and still refuses a bad one."""
    windows = (
        '  syncWindows: [{kind: deny, schedule: "61 * * * *", duration: 1h, namespaces: [shop]}]\n'
    )
    report = _parse_fresh(_PROJECT + windows)
    assert "croniter" in report["after"]
    assert report["diagnostics"] == [
        'm.yaml:6: AppProject/shop: spec.syncWindows[0].schedule: "61 * * * *" is not a cron '
        "schedule"
    ]
