"""A store with a Rollout paused mid-canary (run by the real Rollout controller on a virtual
clock), an AnalysisRun of its canary, and an Application mid-sync; the dashboard over it; and
a headless Chromium to look at it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from dashboard_env import Scene, fill, serving

from controllers.rollout_harness import Harness
from headway.clock import VirtualClock
from system_programs import require_program

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver


@pytest.fixture
def scene(tmp_path: Path, clock: VirtualClock) -> Iterator[Scene]:
    h = Harness(tmp_path, clock)
    canary = fill(h)
    state_dir = tmp_path / "state"
    with serving(h.cluster, state_dir, clock=clock) as served:
        yield Scene(h, served, state_dir, canary)


@pytest.fixture
def browser() -> Iterator[WebDriver]:
    """A headless Debian Chromium driven through Debian's chromedriver (never a browser
    that Selenium would download)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium, driver = require_program("chromium"), require_program("chromedriver")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                 "--window-size=1280,1600"):
        options.add_argument(flag)
    session = webdriver.Chrome(service=Service(executable_path=driver), options=options)
    try:
        yield session
    finally:
        session.quit()
