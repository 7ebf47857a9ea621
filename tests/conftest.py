"""Shared fixtures: the virtual clock and access to real system programs."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings

from headway.clock import VirtualClock
from system_programs import require_program

__all__ = ["clock", "require_program"]  # require_program: imported from here by many tests

pytest_plugins = ["prometheus_support"]

# Hypothesis fails an example that runs past 200 ms (and calls it Flaky when the rerun is
# fast): a timed assertion that a loaded 2-core CI machine can trip. Time is not what these
# properties check, so no deadline and no too-slow health check, for every @given.
settings.register_profile("headway", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("headway")


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock()
