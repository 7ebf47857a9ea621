"""A standalone Experiment whose templates ask for a Service (`service`): created once the
template's ReplicaSet exists, with Argo's name, selector, ports, owner and annotations
(`experiments/experiment.go::createTemplateService`, `experiments/service.go::CreateService`),
and deleted only once no pod of the template is available any more."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from test_experiment_controller import ExperimentHarness, experiment

from headway.clock import VirtualClock


def _with_services(**spec: Any) -> dict[str, Any]:
    exp = experiment(**spec)
    baseline, canary = exp["spec"]["templates"]
    baseline["service"] = {}
    canary["service"] = {"name": "trial-preview"}
    for template in (baseline, canary):
        template["template"]["spec"]["containers"][0]["ports"] = [
            {"name": "http", "containerPort": 8080}, {"containerPort": 9090, "protocol": "UDP"}]
    return exp


def _services(h: ExperimentHarness) -> dict[str, dict[str, Any]]:
    return {s["metadata"]["name"]: s for s in h.cluster.list("v1", "Service", namespace="default")}


def test_each_template_gets_its_service_and_loses_it_after_its_pods(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = ExperimentHarness(tmp_path, clock)
    h.apply(_with_services(duration="60s", scaleDownDelaySeconds=10))
    h.settle()
    status = h.status()
    assert status["phase"] == "Running"
    services = _services(h)
    assert set(services) == {"trial-baseline", "trial-preview"}
    baseline = services["trial-baseline"]
    uid = h.cluster.get("argoproj.io/v1alpha1", "Experiment", "trial", "default")["metadata"]["uid"]
    assert baseline["metadata"]["ownerReferences"] == [{
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Experiment", "name": "trial", "uid": uid,
        "controller": True, "blockOwnerDeletion": True}]
    assert baseline["metadata"]["annotations"] == {
        "experiment.argoproj.io/name": "trial", "experiment.argoproj.io/template-name": "baseline"}
    hashes = {t["name"]: t["podTemplateHash"] for t in status["templateStatuses"]}
    assert baseline["spec"]["selector"] == {
        "app": "web", "role": "baseline", "rollouts-pod-template-hash": hashes["baseline"]}
    assert baseline["spec"]["ports"] == [
        {"name": "http", "protocol": "TCP", "port": 8080, "targetPort": 8080},
        {"protocol": "UDP", "port": 9090, "targetPort": 9090}]
    assert {t["name"]: t.get("serviceName") for t in status["templateStatuses"]} == {
        "baseline": "trial-baseline", "canary": "trial-preview"}

    clock.advance(60)  # ended: pods still up for scaleDownDelaySeconds, so are the Services
    h.settle()
    assert h.status()["phase"] == "Successful"
    assert set(_services(h)) == {"trial-baseline", "trial-preview"}
    clock.advance(10)
    h.settle()
    assert _services(h) == {}
    assert all("serviceName" not in t for t in h.status()["templateStatuses"])


def test_a_template_that_drops_its_service_has_it_deleted(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = ExperimentHarness(tmp_path, clock)
    h.apply(_with_services())
    h.settle()
    edited = _with_services()
    del edited["spec"]["templates"][1]["service"]
    h.apply(edited)
    h.settle()
    assert set(_services(h)) == {"trial-baseline"}
