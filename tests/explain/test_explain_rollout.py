"""`headway explain rollout`: an analysis that failed on its 12th measurement, told from the
decision journal - every measured value (the status keeps only the last 10), the query as it
ran with the Secret argument masked, the conditions and limits, and the verdict's reason."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from typer.testing import CliRunner

from headway.cli.main import app as cli
from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
from headway.controllers.analysis.controller import AnalysisController
from headway.decisions import SqliteJournal, Subject, journal_path
from headway.explain.rollout_story import RunEvidence, rollout_story
from headway.providers.protocol import (
    MeasurementRequest,
    ProviderMeasurement,
    SynchronousProvider,
    measured,
)
from headway.providers.registry import ProviderRegistry
from headway.providers.values import json_text

NS = "default"
API = "argoproj.io/v1alpha1"
TOKEN = "s3cr3t-metrics-token"
VALUES = [0.01, 0.02, 0.01, 0.03, 0.02, 0.01, 0.02, 0.03, 0.04, 0.02, 0.03, 0.09]


@dataclass
class QueryEcho(SynchronousProvider):
    """Answers the scripted values and reports the query as it ran, as Prometheus does."""

    _clock: VirtualClock
    values: list[float] = field(default_factory=list)

    async def run(self, request: MeasurementRequest) -> ProviderMeasurement:
        query = str((request.metric.provider.plugin or {})["fake"]["query"])
        value = [self.values.pop(0)]
        return measured(
            request,
            result=value,
            value=json_text(value),
            finished_at=self._clock.now(),
            query=query,
            metadata={"ResolvedPrometheusQuery": query},
        )


@pytest.fixture
def state(tmp_path: Path) -> Path:
    (tmp_path / "state").mkdir()
    return tmp_path / "state"


def _rollout_and_run(store: LocalCluster) -> None:
    rollout = store.create(
        {
            "apiVersion": API,
            "kind": "Rollout",
            "metadata": {"name": "web", "namespace": NS},
            "spec": {"strategy": {"canary": {"steps": [{"setWeight": 20}, {"analysis": {}}]}}},
        }
    )
    store.patch_status(
        API,
        "Rollout",
        "web",
        NS,
        {
            "phase": "Degraded",
            "abort": True,
            "currentPodHash": "abc",
            "currentStepIndex": 1,
            "message": "RolloutAborted: metric error-rate failed",
        },
    )
    owner = {"apiVersion": API, "kind": "Rollout", "name": "web", "uid": rollout["metadata"]["uid"]}
    store.apply(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "metrics-token", "namespace": NS},
            "stringData": {"token": TOKEN},
        },
        field_manager="test",
    )
    query = 'sum(rate(errors{token="{{args.token}}"}[1m]))'
    ref = {"secretKeyRef": {"name": "metrics-token", "key": "token"}}
    metric = {
        "name": "error-rate",
        "interval": "30s",
        "count": 20,
        "failureCondition": "result[0] > 0.05",
        "failureLimit": 0,
        "provider": {"plugin": {"fake": {"query": query}}},
    }
    store.create(
        {
            "apiVersion": API,
            "kind": "AnalysisRun",
            "metadata": {
                "name": "web-abc-1",
                "namespace": NS,
                "labels": {"rollouts-pod-template-hash": "abc", "step-index": "1"},
                "ownerReferences": [owner],
            },
            "spec": {"args": [{"name": "token", "valueFrom": ref}], "metrics": [metric]},
        }
    )


@pytest.fixture
async def failed_run(state: Path, clock: VirtualClock) -> Iterator[Path]:
    store = LocalCluster(state / "cluster.db", clock)
    journal = SqliteJournal(journal_path(state))
    _rollout_and_run(store)
    provider = QueryEcho(clock, list(VALUES))
    controller = AnalysisController(
        providers=ProviderRegistry({"plugin:fake": provider}), clock=clock, journal=journal
    )
    for _ in range(40):
        wait = await controller.step(store, NS, "web-abc-1", clock.now())
        if wait is None:
            break
        clock.advance(wait)
    run = store.get(API, "AnalysisRun", "web-abc-1", NS)
    assert run["status"]["phase"] == "Failed"  # the situation: failed on the 12th value
    assert len(run["status"]["metricResults"][0]["measurements"]) == 10  # status keeps 10
    store.close()
    journal.close()
    yield state


def _explain(state: Path, *args: str) -> str:
    result = CliRunner().invoke(
        cli, ["explain", "rollout", "web", "-n", NS, "--state-dir", str(state), *args]
    )
    assert result.exit_code == 0, result.output
    return result.output


def test_every_measured_value_is_told_in_order_with_the_verdict(failed_run: Path) -> None:
    story = json.loads(_explain(failed_run, "-o", "json"))
    measurements = [x for x in story["lines"] if x["type"] == "measurement"]
    assert [x["data"]["value"] for x in measurements] == [json_text([v]) for v in VALUES]
    assert [x["data"]["phase"] for x in measurements][-2:] == ["Successful", "Failed"]
    verdict = next(x for x in story["lines"] if x["type"] == "verdict")
    assert verdict["data"]["phase"] == "Failed"
    assert story["lines"].index(verdict) > story["lines"].index(measurements[-1])
    assert "journal" in story["sources"]
    assert story["outcome"].startswith("aborted at step 1 of 2")


def test_the_query_as_it_ran_and_the_condition_it_was_judged_by(failed_run: Path) -> None:
    text = _explain(failed_run)
    assert 'ResolvedPrometheusQuery: sum(rate(errors{token="***"}[1m]))' in text
    assert "judged by failureCondition `result[0] > 0.05`; failureLimit 0; count 20" in text
    assert "metric error-rate: value [0.09] -> Failed" in text
    assert TOKEN not in text
    assert TOKEN not in journal_path(failed_run).read_bytes().decode("utf-8", "replace")


def test_without_the_journal_the_story_says_what_it_lacks(failed_run: Path) -> None:
    journal_path(failed_run).unlink()
    story = json.loads(_explain(failed_run, "-o", "json"))
    measurements = [x for x in story["lines"] if x["type"] == "measurement"]
    assert len(measurements) == 10  # only what the status keeps
    assert any("not in the decision journal" in n for n in story["notes"])


def test_the_journal_keeps_a_bounded_number_of_operations(
    tmp_path: Path, clock: VirtualClock
) -> None:
    journal = SqliteJournal(tmp_path / "j.sqlite", keep_operations=2, max_records=3)
    subject = Subject("AnalysisRun", NS, "r")
    for operation in ("one", "two", "three"):
        for i in range(5):
            journal.record(subject, operation=operation, at=clock.now(), type="m", data={"i": i})
    assert journal.operations(subject) == ["two", "three"]
    records, dropped = journal.records(subject, "three")
    assert ([r.data["i"] for r in records], dropped) == ([0, 1, 2], 2)
    assert journal.records(subject, "one") == ([], 0)
    journal.close()


def test_the_verdict_is_an_event_on_the_run(failed_run: Path, clock: VirtualClock) -> None:
    with LocalCluster(failed_run / "cluster.db", clock) as store:
        events = [
            e
            for e in store.list("v1", "Event", namespace=NS)
            if e["involvedObject"]["name"] == "web-abc-1"
        ]
    [event] = [e for e in events if e["reason"] == "AnalysisRunFailed"]
    assert event["type"] == "Warning"
    assert "failureLimit (0)" in event["message"]
    assert TOKEN not in json.dumps(events)


@pytest.mark.parametrize("status", [
    "not an object",
    {"phase": "Failed", "metricResults": "not a list"},
    {"phase": "Failed", "metricResults": [7, {"name": "errors", "measurements": "x"},
                                          {"name": "p99", "measurements": [3, {"value": "1",
                                           "phase": "Failed", "metadata": "x"}]}]},
])
def test_a_run_status_of_the_wrong_shape_tells_what_it_can(status: object) -> None:
    # Before: `headway explain rollout` printed an AttributeError traceback for a hand-edited
    # AnalysisRun whose metricResults was not a list of objects (the dashboard hid it).
    run = {"metadata": {"name": "web-run"}, "status": status}
    rollout = {"metadata": {"name": "web"}, "status": {"phase": "Degraded"}}
    story = rollout_story(rollout, [RunEvidence(run=run)])
    texts = [line.text for line in story.lines]
    if isinstance(status, dict) and isinstance(status["metricResults"], list):
        assert "metric p99: value 1 -> Failed" in texts
