"""RFC 3339 timestamps as Kubernetes writes them (seconds, UTC, `Z`)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

__all__ = ["format_time", "parse_time"]


def format_time(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(value: Any) -> datetime | None:
    """A timestamp string, or None when it is missing or unreadable."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
