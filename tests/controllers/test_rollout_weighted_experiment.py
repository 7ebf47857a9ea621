"""A canary `experiment` step whose templates carry `weight`: the Experiment creates a Service
per template (Argo's `createTemplateService`), and while it runs the Rollout sends each
template its share through the router, out of the stable's (Argo's
`calculateWeightDestinationsFromExperiment` and `calculateWeightStatus`). When the experiment
ends, or the rollout aborts, the templates' destinations go and their Services follow their
pods."""

from __future__ import annotations

import copy
from pathlib import Path

from rollout_harness import API, service
from test_rollout_experiment_step import BothHarness
from test_rollout_traffic import CRD, VS, VS_API, canary

from headway.clock import VirtualClock
from headway.model.obj import Obj

EXPERIMENT = {
    "duration": "60s",
    "templates": [{"name": "baseline", "specRef": "stable", "weight": 10},
                  {"name": "canary", "specRef": "canary", "weight": 10,
                   "service": {"name": "web-exp-canary"}}],
}
STEPS = [{"setWeight": 20}, {"experiment": EXPERIMENT}, {"setWeight": 50}, {"pause": {}}]


def _rollout(image: str, *, ports: bool = True) -> Obj:
    container: dict[str, object] = {"name": "app", "image": image}
    if ports:
        container["ports"] = [{"name": "http", "containerPort": 8080}]
    return {
        "apiVersion": API, "kind": "Rollout",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"replicas": 10, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [container]}},
                 "strategy": {"canary": canary(copy.deepcopy(STEPS))}},
    }


def _updated(tmp_path: Path, clock: VirtualClock) -> tuple[BothHarness, str]:
    h = BothHarness(tmp_path, clock)
    for obj in (CRD, VS, service("web-stable"), service("web-canary"), _rollout("app:v1")):
        h.apply(obj)
    h.settle()
    clock.advance(1)
    h.apply(_rollout("app:v2"))
    h.settle()
    return h, str(h.status()["currentPodHash"])


def _route(h: BothHarness) -> list[tuple[str, int]]:
    vs = h.cluster.get(VS_API, "VirtualService", "web", "default")
    return [(d["destination"]["host"], d["weight"]) for d in vs["spec"]["http"][0]["route"]]


def test_templates_get_services_and_their_share_while_the_experiment_runs(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h, new = _updated(tmp_path, clock)
    exp = h.experiment()
    name = exp["metadata"]["name"]
    stable = h.status()["stableRS"]
    assert [t.get("service") for t in exp["spec"]["templates"]] == [
        {}, {"name": "web-exp-canary"}]
    assert exp["status"]["phase"] == "Running"
    baseline = h.cluster.get("v1", "Service", f"{name}-baseline", "default")
    assert baseline["metadata"]["annotations"] == {"experiment.argoproj.io/name": name,
                                                   "experiment.argoproj.io/template-name":
                                                   "baseline"}
    assert baseline["metadata"]["ownerReferences"][0]["uid"] == exp["metadata"]["uid"]
    baseline_hash = exp["status"]["templateStatuses"][0]["podTemplateHash"]
    assert baseline["spec"]["selector"] == {"app": "web",
                                            "rollouts-pod-template-hash": baseline_hash}
    assert baseline["spec"]["ports"][0] == {"name": "http", "protocol": "TCP", "port": 8080,
                                            "targetPort": 8080}
    canary_hash = exp["status"]["templateStatuses"][1]["podTemplateHash"]
    canary_svc = h.cluster.get("v1", "Service", "web-exp-canary", "default")
    assert canary_svc["spec"]["selector"]["rollouts-pod-template-hash"] == canary_hash
    assert [t["serviceName"] for t in exp["status"]["templateStatuses"]] == [
        f"{name}-baseline", "web-exp-canary"]
    assert _route(h) == [("web-stable", 60), ("web-canary", 20),
                         (f"{name}-baseline", 10), ("web-exp-canary", 10)]
    weights = h.status()["canary"]["weights"]
    assert weights["stable"]["weight"] == 60 and weights["canary"]["weight"] == 20
    assert weights["additional"] == [
        {"weight": 10, "serviceName": f"{name}-baseline",
         "podTemplateHash": baseline_hash},
        {"weight": 10, "serviceName": "web-exp-canary", "podTemplateHash": canary_hash}]
    assert len({new, stable, baseline_hash, canary_hash}) == 4  # four sets of pods

    clock.advance(60)  # the experiment's duration: Successful, the rollout moves on
    h.settle()
    assert h.experiment()["status"]["phase"] == "Successful"
    assert _route(h) == [("web-stable", 50), ("web-canary", 50)]
    assert "additional" not in h.status()["canary"]["weights"]
    assert h.cluster.list("v1", "Service", namespace="default") != []
    clock.advance(30)  # the Experiment's scaleDownDelaySeconds: pods go, then the Services
    h.settle()
    names = {s["metadata"]["name"] for s in h.cluster.list("v1", "Service", namespace="default")}
    assert names == {"web-stable", "web-canary"}
    assert all("serviceName" not in t for t in h.experiment()["status"]["templateStatuses"])


def test_an_abort_takes_the_templates_share_back_to_stable(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h, _new = _updated(tmp_path, clock)
    assert len(_route(h)) == 4
    h.patch_status({"abort": True})
    h.settle()
    assert _route(h) == [("web-stable", 100), ("web-canary", 0)]
    assert h.experiment()["spec"]["terminate"] is True


def test_a_service_name_already_taken_fails_the_experiment_untouched(
    tmp_path: Path, clock: VirtualClock
) -> None:
    """Argo's CreateService refuses a Service it does not own; Headway never overwrites it."""
    h = BothHarness(tmp_path, clock)
    taken = {**service("web-exp-canary", app="other")}
    for obj in (CRD, VS, service("web-stable"), service("web-canary"), taken,
                _rollout("app:v1")):
        h.apply(obj)
    h.settle()
    h.apply(_rollout("app:v2"))
    h.settle()
    exp = h.experiment()
    assert exp["status"]["phase"] == "Error"
    assert exp["status"]["message"] == (
        "Failed to create Service web-exp-canary for template 'canary': service web-exp-canary "
        "already exists and is not owned by experiment template canary")
    live = h.cluster.get("v1", "Service", "web-exp-canary", "default")
    assert live["spec"]["selector"] == {"app": "other"}
    assert h.status()["abort"] is True
    assert _route(h) == [("web-stable", 100), ("web-canary", 0)]


def test_a_template_without_a_service_gets_no_share(tmp_path: Path, clock: VirtualClock) -> None:
    """Containers with no port get no Service (as Argo); Argo would still route the template's
    weight to an empty host, Headway leaves that share with the stable."""
    h = BothHarness(tmp_path, clock)
    for obj in (CRD, VS, service("web-stable"), service("web-canary"),
                _rollout("app:v1", ports=False)):
        h.apply(obj)
    h.settle()
    h.apply(_rollout("app:v2", ports=False))
    h.settle()
    assert h.experiment()["status"]["phase"] == "Running"
    assert all("serviceName" not in t for t in h.experiment()["status"]["templateStatuses"])
    assert _route(h) == [("web-stable", 80), ("web-canary", 20)]
    assert "additional" not in h.status()["canary"]["weights"]


def test_get_shows_the_templates_share(tmp_path: Path, clock: VirtualClock) -> None:
    from typer.testing import CliRunner

    from headway.cli.main import _register_all, app

    h, _new = _updated(tmp_path, clock)
    name = h.experiment()["metadata"]["name"]
    _register_all()
    result = CliRunner().invoke(app, ["rollouts", "get", "web", "--state-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert (f"canary 20%, {name}-baseline 10%, web-exp-canary 10%, stable 60% (verified)"
            in " ".join(result.output.split()))
