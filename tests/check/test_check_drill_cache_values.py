"""The drill answers' keys and stored verdicts are the fields of the settings and the verdict
in order, as `dataclasses.astuple` gave them before (cli/check_drill_cache.py `_values`), so
answers kept by earlier runs are found again and read back equal."""

from __future__ import annotations

import dataclasses

import pytest

from headway.check.drill_engine import DrillSettings, DrillVerdict
from headway.cli import check_drill_cache


@pytest.mark.parametrize(
    "value",
    [
        DrillSettings(),
        DrillSettings(scenario="latency=100ms->400ms", rps=5.0, runs=3, seed=7),
        DrillVerdict(),
        DrillVerdict(unreadable="no template", median_abort=None),
        DrillVerdict(detected=0.9, median_abort=125.0, whole_service_metrics=("a", "b")),
    ],
)
def test_values_are_what_astuple_gave(value: DrillSettings | DrillVerdict) -> None:
    values = check_drill_cache._values(value)
    assert values == dataclasses.astuple(value)
    assert [type(v) for v in values] == [type(v) for v in dataclasses.astuple(value)]
    if isinstance(value, DrillVerdict):
        assert DrillVerdict(*values) == value
