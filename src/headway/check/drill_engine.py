"""What the drill rules (HW214, HW215) ask of the drill engine, and what it answers.

The engine itself lives above the check layer (`headway.cli.check_drill`); the check only
knows this shape, so the rules stay pure and testable with any engine.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from headway.model.manifests import ParseMemo
from headway.model.yamlload import Document

__all__ = ["DrillEngine", "DrillSettings", "DrillVerdict"]


@dataclass(frozen=True)
class DrillSettings:
    """The standard scenario every Rollout is replayed on (`drill:` in the check config)."""

    scenario: str = "error-ratio=1%->5%"
    rps: float = 100.0
    runs: int = 20
    horizon: str = "15m"
    seed: int = 0
    min_detection: float = 0.1
    """Below this share of bad releases aborted, the analysis never fires (HW214)."""
    max_false_aborts: float = 0.1
    """Above this share of identical releases aborted, it fires too often (HW215)."""


@dataclass(frozen=True)
class DrillVerdict:
    """What the drill found for one Rollout, or `unreadable` saying why it could not run."""

    unreadable: str = ""
    detected: float = 0.0
    paused: float = 0.0
    promoted: float = 0.0
    undecided: float = 0.0
    median_abort: float | None = None
    bad_requests: float = 0.0
    false_aborts: float = 0.0
    whole_service_metrics: tuple[str, ...] = ()


class DrillEngine(Protocol):
    """Replays `rollout` gated by `templates` on the settings' scenario; `parses` holds the
    typed views the check already built (the loader validated every document)."""

    def __call__(
        self,
        rollout: Document,
        templates: Mapping[str, Document],
        settings: DrillSettings,
        *,
        parses: ParseMemo | None = None,
    ) -> DrillVerdict: ...
