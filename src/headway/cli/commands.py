"""The CLI's table of contents: every module that adds commands to `headway`."""

from __future__ import annotations

from types import ModuleType

from headway.cli import (
    analysis,
    app,
    apply,
    check,
    demo,
    objects,
    rollouts,
    runtime,
    serve,
    validate,
)

MODULES: list[ModuleType] = [
    validate,
    runtime,
    objects,
    apply,
    analysis,
    check,
    rollouts,
    serve,
    app,
    demo,
]
