"""Durations as Argo writes them, parsed to seconds.

Argo uses two spellings. Fields typed `DurationString` in Argo Rollouts (a metric's `interval`,
`initialDelay`, an experiment's `duration`) and an AppProject sync window's `duration` go
through Go's `time.ParseDuration`: a sequence of decimal numbers with units (`1h30m`,
`1.5h`, `500ms`), where a bare number other than `0` is an error. Fields that also accept
plain seconds (a Rollout `pause.duration`, which is int-or-string, and an Application's
retry `backoff.duration`, whose default unit is seconds) take integers and integer strings
as seconds. `parse_duration(..., bare_seconds=...)` chooses between the two.
"""

from __future__ import annotations

import re

__all__ = ["DurationError", "format_duration", "parse_duration"]

# Seconds per unit, as Go's time package spells them (both micro signs are accepted).
_UNIT_SECONDS: dict[str, float] = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,  # U+00B5 MICRO SIGN
    "μs": 1e-6,  # U+03BC GREEK SMALL LETTER MU
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}
_TERM = re.compile(r"(\d+\.?\d*|\.\d+)([a-zµμ]+)")
_INTEGER = re.compile(r"[+-]?\d+")


class DurationError(ValueError):
    """A value that is not a duration; the message says why, in the user's words."""


# Seconds of each duration text read so far, by (text, bare_seconds): manifests spell the
# same few durations thousands of times, and validation and the rules read each again.
_SECONDS_OF_TEXT: dict[tuple[str, bool], float] = {}
_REMEMBERED_TEXTS = 10_000


def parse_duration(value: object, *, bare_seconds: bool = True) -> float:
    """Seconds for an Argo duration value.

    Accepts Go duration strings (`30s`, `1h30m`, `500ms`, `2m`, `1.5h`); with
    `bare_seconds` also integers and integer strings, meaning seconds. Negative values are
    rejected: no Argo field gives them a meaning.
    """
    if type(value) is not str:
        return _parse_value(value, bare_seconds=bare_seconds)
    key = (value, bare_seconds)
    seconds = _SECONDS_OF_TEXT.get(key)
    if seconds is None:
        seconds = _parse_value(value, bare_seconds=bare_seconds)  # raises for no duration
        if len(_SECONDS_OF_TEXT) >= _REMEMBERED_TEXTS:
            _SECONDS_OF_TEXT.clear()
        _SECONDS_OF_TEXT[key] = seconds
    return seconds


def _parse_value(value: object, *, bare_seconds: bool) -> float:
    if isinstance(value, bool):
        raise DurationError(f"{value!r} is not a duration")
    if isinstance(value, int):
        if not bare_seconds:
            hint = f'write it with a unit, e.g. "{value}s"'
            raise DurationError(f"{value} is not a duration ({hint})")
        return _non_negative(float(value), str(value))
    if not isinstance(value, str):
        raise DurationError(f"{value!r} is not a duration")
    text = value.strip()
    if _INTEGER.fullmatch(text):
        if bare_seconds or int(text) == 0:
            return _non_negative(float(int(text)), value)
        raise DurationError(f'"{value}" is not a duration (missing unit, e.g. "{text}s")')
    return _non_negative(_parse_go_duration(text, value), value)


def _parse_go_duration(text: str, original: str) -> float:
    sign = 1.0
    if text[:1] in ("+", "-"):
        sign = -1.0 if text[0] == "-" else 1.0
        text = text[1:]
    if not text:
        raise DurationError(f'"{original}" is not a duration')
    total = 0.0
    position = 0
    for match in _TERM.finditer(text):
        if match.start() != position:
            break
        number, unit = match.groups()
        if unit not in _UNIT_SECONDS:
            raise DurationError(f'"{original}" is not a duration (unknown unit "{unit}")')
        total += float(number) * _UNIT_SECONDS[unit]
        position = match.end()
    if position != len(text) or position == 0:
        raise DurationError(f'"{original}" is not a duration')
    return sign * total


def _non_negative(seconds: float, original: str) -> float:
    if seconds < 0:
        raise DurationError(f'"{original}" is negative; a duration must be zero or more')
    return seconds


def format_duration(seconds: float) -> str:
    """A short Go-style spelling of `seconds`: 90 -> `1m30s`, 0.5 -> `500ms`, 0 -> `0s`."""
    if seconds < 1 and seconds > 0:
        return f"{round(seconds * 1000)}ms"
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    out = (f"{hours}h" if hours else "") + (f"{minutes}m" if minutes else "")
    frac = seconds - whole
    if secs or frac or not out:
        out += f"{secs + frac:g}s"
    return out
