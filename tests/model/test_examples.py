"""The example GitOps repository is valid and says what the seeds ask of it."""

from __future__ import annotations

from pathlib import Path

from headway.model import manifests
from headway.model.analysis import AnalysisTemplate
from headway.model.application import Application
from headway.model.appproject import AppProject
from headway.model.rollout import Rollout
from headway.model.yamlload import load_documents
from headway.source.manifest_files import find_manifest_files

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "gitops-repo"


def _views() -> list[object]:
    views: list[object] = []
    for path in find_manifest_files(EXAMPLE):
        loaded = load_documents(path.read_text(), str(path))
        assert loaded.diagnostics == []
        for document in filter(manifests.is_object, loaded.documents):
            view, diagnostics = manifests.parse_manifest(document)
            assert diagnostics == [], diagnostics
            views.append(view)
    return views


def _one(cls: type) -> object:
    found = [v for v in _views() if isinstance(v, cls)]
    assert len(found) == 1
    return found[0]


def test_rollout_steps_and_hash_scoped_analysis() -> None:
    rollout = _one(Rollout)
    assert isinstance(rollout, Rollout)
    canary = rollout.spec.strategy.canary
    assert canary is not None
    summary = [step.set_weight if step.kind == "setWeight" else step.kind for step in canary.steps]
    assert summary == [10, "pause", "analysis", 50, "pause", "analysis", 100]
    assert canary.steps[1].pause is not None and canary.steps[1].pause.duration == 120.0
    for step in (canary.steps[2], canary.steps[5]):
        assert step.analysis is not None
        arg = step.analysis.args[0]
        assert arg.name == "canary-hash" and arg.value_from is not None
        assert arg.value_from.pod_template_hash_value == "Latest"
    assert canary.stable_service and canary.canary_service and canary.traffic_routing


def test_analysis_fails_on_empty_results() -> None:
    template = _one(AnalysisTemplate)
    assert isinstance(template, AnalysisTemplate)
    for metric in template.spec.metrics:
        assert metric.success_condition is not None
        assert metric.success_condition.startswith("len(result) > 0 && ")
        assert metric.failure_condition is None  # empty must fail, not be Inconclusive
        query = metric.provider.prometheus.query if metric.provider.prometheus else ""
        assert 'rollouts_pod_template_hash="{{args.canary-hash}}"' in (query or "")


def test_hpa_syncs_after_the_rollout() -> None:
    waves = {}
    for view in _views():
        assert hasattr(view, "metadata")
        annotations = view.metadata.annotations
        waves[view.kind] = int(annotations.get("argocd.argoproj.io/sync-wave", "0"))
    assert waves["HorizontalPodAutoscaler"] > waves["Rollout"] > waves["Service"]


def test_application_and_project_are_safe() -> None:
    app = _one(Application)
    project = _one(AppProject)
    assert isinstance(app, Application) and isinstance(project, AppProject)
    assert app.spec.project == project.name != "default"
    assert "resources-finalizer.argocd.argoproj.io" in app.metadata.finalizers
    policy = app.spec.sync_policy
    assert policy is not None and policy.automated is not None and policy.retry is not None
    assert policy.automated.prune and policy.automated.self_heal
    assert 0 < policy.retry.limit <= 10
    ignored = [(i.kind, i.json_pointers) for i in app.spec.ignore_differences]
    assert ("Rollout", ("/spec/replicas",)) in ignored
    assert project.spec.cluster_resource_whitelist_set
    assert project.spec.cluster_resource_whitelist == ()
    assert all(not r.pattern.endswith("*") for r in project.spec.source_repos)
