"""Shared fixtures: the virtual clock and access to real system programs."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

from headway.cli import yaml_reader
from headway.clock import VirtualClock
from headway.model import yamlrust
from system_programs import require_program

__all__ = ["clock", "require_program"]  # require_program: imported from here by many tests

pytest_plugins = ["prometheus_support"]

# Hypothesis fails an example that runs past 200 ms (and calls it Flaky when the rerun is
# fast): a timed assertion that a loaded 2-core CI machine can trip. Time is not what these
# properties check, so no deadline and no too-slow health check, for every @given.
settings.register_profile("headway", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("headway")


@pytest.fixture(scope="session", autouse=True)
def _private_cache_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Every test, and every `headway` process a test starts, caches under a directory of this
    test session (`XDG_CACHE_HOME`) instead of the user's `~/.cache/headway`: a test run must
    not leave files in the home of whoever runs it, nor read caches an earlier run (of other
    code) left there. Tests of the cache's own location set the variable themselves."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))
        yield


@pytest.fixture(scope="session", autouse=True)
def _yaml_readers_compared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Every YAML text a test reads through yaml_rs (`headway.model.yamlrust`) is read by
    PyYAML too, in this process and in every `headway` process a test starts: the read fails
    (`ReadersDisagree`) where the two differ, and the report also goes to a file that fails
    the session at its end, should some code have caught the error. The whole suite is a
    comparison of the readers. Tests of the switch itself set the variable themselves."""
    reports = tmp_path_factory.mktemp("yaml-readers") / "disagreements.txt"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HEADWAY_YAML_CROSSCHECK", str(reports))
        yamlrust.compare_with_pyyaml(yaml_reader.appender(str(reports)))
        yield
    yamlrust.compare_with_pyyaml(None, enabled=False)
    if reports.exists() and reports.read_text(encoding="utf-8").strip():
        pytest.fail(f"yaml_rs and PyYAML read texts differently:\n{reports.read_text()[:4000]}")


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock()
