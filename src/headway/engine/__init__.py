"""Headway as a library: build the controllers for a store, a Git cache and settings; run them,
step them, stop them. `headway serve`, the demo's controllers and the end-to-end tests all go
through here. See docs/embedding.md.
"""

from headway.engine.engine import Engine, default_git_cache
from headway.engine.loops import health_registry
from headway.engine.settings import (
    ALL_LOOPS,
    CONTROLLER_NAMES,
    EngineSettings,
    Loop,
    controller_names,
)

__all__ = [
    "ALL_LOOPS",
    "CONTROLLER_NAMES",
    "Engine",
    "EngineSettings",
    "Loop",
    "controller_names",
    "default_git_cache",
    "health_registry",
]
