"""The Rollout page shows the current `experiment` step's Experiment, as `headway rollouts get`
does: its phase, each template's ReplicaSet and each analysis's AnalysisRun."""

from __future__ import annotations

import html
import re
from pathlib import Path

import httpx2
from dashboard_env import serving

from controllers.rollout_harness import API, Harness, rollout, template
from headway.clock import VirtualClock
from headway.controllers.manager import ObjectKey
from headway.controllers.rollout.experiments import ExperimentController

EXPERIMENT = {
    "duration": "60s",
    "templates": [{"name": "baseline", "specRef": "stable"},
                  {"name": "canary", "specRef": "canary", "replicas": 2}],
    "analyses": [{"name": "errors", "templateName": "errors",
                  "args": [{"name": "service", "valueFrom": {"podTemplateHashValue": "Latest"}}]}],
}
STEPS = [{"experiment": EXPERIMENT}, {"setWeight": 50}, {"pause": {}}]


class WithExperiments(Harness):
    """The Rollout controller and the Experiment controller, stepped together."""

    def __init__(self, tmp_path: Path, clock: VirtualClock) -> None:
        super().__init__(tmp_path, clock)
        self.experiments = ExperimentController(self.cluster, clock)

    def step(self, name: str = "web") -> float | None:
        wake = super().step(name)
        for exp in self.cluster.list(API, "Experiment", namespace="default"):
            self.experiments.step(ObjectKey("default", exp["metadata"]["name"]))
        return wake


def test_rollout_page_shows_the_running_experiment(tmp_path: Path, clock: VirtualClock) -> None:
    h = WithExperiments(tmp_path, clock)
    h.apply(template("errors", args=[{"name": "service"}]))
    h.apply(rollout(canary={"steps": STEPS}))
    h.settle()
    h.apply(rollout(image="app:v2", canary={"steps": STEPS}))
    h.settle()
    new = h.status()["currentPodHash"]
    [exp] = h.cluster.list(API, "Experiment", namespace="default")
    hashes = {t["name"]: t["podTemplateHash"] for t in exp["status"]["templateStatuses"]}
    name = f"web-{new}-2-0"
    with serving(h.cluster, tmp_path / "state", clock=clock) as served:
        text = httpx2.get(served.url + "/rollouts/default/web/body", timeout=30).text
        found = re.search(r'<div id="rollout-experiment"[^>]*>(.*?)</div>', text, re.S)
        assert found is not None
        section = html.unescape(found.group(1))
        assert name in section and "Running" in section
        for template_name, available in (("baseline", "1/1"), ("canary", "2/2")):
            replica_set = f"{name}-{template_name}-{hashes[template_name]}"
            row = f"<td>{template_name}</td><td>{replica_set}</td><td>{available}</td>"
            assert row in section
        assert f"<td>errors</td><td>{name}-errors</td>" in section
        clock.advance(60)
        h.settle()  # the experiment succeeded and the step moved on
        text = httpx2.get(served.url + "/rollouts/default/web/body", timeout=30).text
        assert 'id="rollout-experiment"' not in text
