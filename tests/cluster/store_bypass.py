"""Put into the store what its schema check refuses: an object kept by an older Headway, or
written by another tool straight into the file. Controllers must survive such objects."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path


def force_field(db: Path, *, kind: str, name: str, path: str, value: object) -> None:
    """Set the field at the JSON `path` (`$.spec.replicas`) of the stored object to `value`."""
    with sqlite3.connect(db) as conn:
        changed = conn.execute(
            "UPDATE objects SET body = json_set(body, ?, json(?)) WHERE kind = ? AND name = ?",
            (path, json.dumps(value), kind, name),
        ).rowcount
    assert changed == 1, f"no {kind} {name} in {db}"
