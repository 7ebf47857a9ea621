"""An AnalysisRun whose status was written malformed through the API ends in Error naming
the field, as a malformed spec does; the controller never measures on it nor raises."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from analysis_fakes import Harness, analysis_run, harness, metric

from headway.clock import VirtualClock

API = "argoproj.io/v1alpha1"


@pytest.fixture
def started(tmp_path: Path, clock: VirtualClock) -> Iterator[Harness]:
    made = harness(tmp_path, clock, [[0.01], [0.01], [0.01]])
    h = next(made)
    h.create(analysis_run(metric(interval="10s", count=3, successCondition="result[0] < 0.05")))
    yield h
    made.close()


@pytest.mark.parametrize(
    ("status", "field"),
    [
        ({"metricResults": 5}, "status.metricResults: expected a list"),
        (
            {"metricResults": [{"name": "m", "measurements": 5}]},
            "status.metricResults[0].measurements: expected a list of mappings",
        ),
        ({"metricResults": [{"name": "m", "count": "many"}]}, "status.metricResults[0].count"),
    ],
)
async def test_a_malformed_run_status_ends_the_run_in_error_naming_the_field(
    started: Harness, status: dict[str, Any], field: str
) -> None:
    await started.step()
    started.cluster.patch_status(API, "AnalysisRun", "run", "default", status)
    measured = len(started.provider.runs)
    assert await started.step() is None
    assert started.status()["phase"] == "Error"
    assert started.status()["message"].startswith(field)
    assert len(started.provider.runs) == measured
