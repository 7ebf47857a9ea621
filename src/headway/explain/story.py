"""A story: what happened, in order, with the numbers and the reason it stopped or passed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Story", "StoryLine"]


@dataclass(frozen=True)
class StoryLine:
    at: str  # RFC 3339, "" when unknown
    type: str  # started, measurement, verdict, applied, waiting, passed, finished, event, ...
    text: str
    data: Mapping[str, Any] = field(default_factory=dict)
    depth: int = 0  # 1: a detail of the line above


@dataclass(frozen=True)
class Story:
    subject: str  # `Rollout shop/web`
    outcome: str  # one sentence: where it ended and why
    lines: tuple[StoryLine, ...]
    sources: tuple[str, ...]  # where the story came from: status, journal, events
    notes: tuple[str, ...] = ()  # what could not be told (journal missing, records dropped)

    def to_json(self) -> dict[str, Any]:
        return {
            "subject": self.subject,
            "outcome": self.outcome,
            "sources": list(self.sources),
            "notes": list(self.notes),
            "lines": [
                {"at": x.at, "type": x.type, "text": x.text, "depth": x.depth, "data": dict(x.data)}
                for x in self.lines
            ],
        }

    def to_text(self) -> str:
        out = [f"{self.subject}: {self.outcome}"]
        for line in self.lines:
            stamp = f"{line.at[:19].replace('T', ' ')}  " if line.at else ""
            indent = "    " * (line.depth + 1)
            out.append(f"{indent}{stamp}{line.text}" if line.depth == 0 else f"{indent}{line.text}")
        out.extend(f"  note: {n}" for n in self.notes)
        return "\n".join(out) + "\n"
