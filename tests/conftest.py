"""Shared fixtures: the virtual clock and access to real system programs."""

from __future__ import annotations

import os
import shutil

import pytest
from hypothesis import HealthCheck, settings

from headway.clock import VirtualClock

pytest_plugins = ["prometheus_support"]

# Hypothesis fails an example that runs past 200 ms (and calls it Flaky when the rerun is
# fast): a timed assertion that a loaded 2-core CI machine can trip. Time is not what these
# properties check, so no deadline and no too-slow health check, for every @given.
settings.register_profile("headway", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("headway")


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock()


def require_program(name: str) -> str:
    """The path of a system program the test needs.

    Under scripts/test (HEADWAY_REQUIRE_SYSTEM_PACKAGES=1) a missing program fails the test,
    so CI can never go green by skipping; elsewhere the test is skipped with a hint.
    """
    sbin = f"/usr/sbin/{name}"
    path = shutil.which(name) or (sbin if os.path.exists(sbin) else None)
    if path:
        return path
    message = f"{name} is not installed; run scripts/install-system-packages"
    if os.environ.get("HEADWAY_REQUIRE_SYSTEM_PACKAGES") == "1":
        pytest.fail(message)
    pytest.skip(message)
