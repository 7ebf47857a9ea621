"""Each model module's `__all__` names things that exist, and the views others use are there."""

from __future__ import annotations

import importlib

import pytest

MODULES = [
    "analysis",
    "analysis_providers",
    "application",
    "application_sources",
    "applicationset",
    "appproject",
    "durations",
    "k8s",
    "key_paths",
    "manifests",
    "owned_replica_set",
    "promotion_pipeline",
    "quantities",
    "rollout",
    "rollout_steps",
    "schema",
    "schema_report",
    "support",
    "syncoptions",
    "traffic_routing",
    "validate",
]


@pytest.mark.parametrize("name", MODULES)
def test_all_names_exist(name: str) -> None:
    module = importlib.import_module(f"headway.model.{name}")
    exported = module.__all__
    missing = [n for n in exported if not hasattr(module, n)]
    assert missing == []


def test_every_parser_is_dispatched() -> None:
    from headway.model import manifests

    kinds = {kind for _, kind in manifests.PARSER_LOADERS}
    assert kinds == {
        "Application",
        "ApplicationSet",
        "AppProject",
        "Rollout",
        "AnalysisTemplate",
        "ClusterAnalysisTemplate",
        "AnalysisRun",
        "PromotionPipeline",
    }
