"""What the notifications controller must remember across a restart, in one JSON file.

`<state_dir>/notifications.json` holds the dedup keys sent per object, the event
occurrences already handled, when each Application was first seen OutOfSync, when the
controller first started (events older than that are history, not news), and the outbox of
deliveries not yet sent. Written whole to a temporary file and renamed, so a crash leaves
the old or the new state, never half of one.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from headway.notify.outbox import Delivery

__all__ = ["MAX_EVENT_KEYS", "NotifyState"]

MAX_EVENT_KEYS = 5000  # handled event occurrences kept; older ones are long gone from the store


@dataclass
class NotifyState:
    path: Path
    started_at: float
    notified: dict[str, list[str]] = field(default_factory=dict)
    events: list[str] = field(default_factory=list)
    out_of_sync_since: dict[str, float] = field(default_factory=dict)
    outbox: dict[str, Delivery] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path, *, now: float) -> NotifyState:
        """The state in `path`; a fresh state starting `now` when there is none (or it is
        unreadable: then notifications already sent may be sent once more)."""
        try:
            raw: dict[str, Any] = json.loads(path.read_text())
            return cls(
                path=path,
                started_at=float(raw["startedAt"]),
                notified={k: list(v) for k, v in raw.get("notified", {}).items()},
                events=list(raw.get("events", [])),
                out_of_sync_since=dict(raw.get("outOfSyncSince", {})),
                outbox={
                    d["notification"]["key"]: Delivery.from_json(d)
                    for d in raw.get("outbox", [])
                },
            )
        except (OSError, ValueError, KeyError, TypeError):
            return cls(path=path, started_at=now)

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps({
            "startedAt": self.started_at,
            "notified": self.notified,
            "events": self.events[-MAX_EVENT_KEYS:],
            "outOfSyncSince": self.out_of_sync_since,
            "outbox": [d.as_json() for d in self.outbox.values()],
        })
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(text)
        os.replace(tmp, self.path)
