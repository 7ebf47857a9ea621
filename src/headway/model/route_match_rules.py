"""The match values of route steps, as Argo Rollouts' validation checks them (and a bit more).

Argo's `hasMultipleMatchValues` (pkg/apis/rollouts/validation/validation.go) requires each
`StringMatch` of a `setHeaderRoute` (`headerValue`) and of a `setMirrorRoute` (`method`,
`path`) to hold exactly one non-empty of `exact`, `prefix`, `regex`. Its mirror check reads
`method` twice and never `headers`; Headway checks every header value too, since Istio
refuses a VirtualService whose header match holds none or several, and the step would then
fail at runtime instead of in `headway validate`. Purely computational.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from headway.model import schema as s

__all__ = ["check_route_matches"]

KINDS = ("exact", "prefix", "regex")


def check_route_matches(step: Mapping[str, Any], where: s.Path, report: s.Reporter) -> None:
    header = step.get("setHeaderRoute")
    for at, match in _entries(header):
        if match.get("headerValue") is not None:
            _one_value(
                match["headerValue"], (*where, "setHeaderRoute", "match", at, "headerValue"), report
            )
    mirror = step.get("setMirrorRoute")
    for at, match in _entries(mirror):
        base = (*where, "setMirrorRoute", "match", at)
        for field in ("method", "path"):
            if match.get(field) is not None:
                _one_value(match[field], (*base, field), report)
        headers = match.get("headers")
        if isinstance(headers, Mapping):
            for name, value in headers.items():
                _one_value(value, (*base, "headers", str(name)), report)


def _entries(route: Any) -> list[tuple[int, Mapping[str, Any]]]:
    matches = route.get("match") if isinstance(route, Mapping) else None
    found = enumerate(matches if isinstance(matches, list) else [])
    return [(at, match) for at, match in found if isinstance(match, Mapping)]


def _one_value(value: Any, path: s.Path, report: s.Reporter) -> None:
    given = [k for k in KINDS if isinstance(value, Mapping) and value.get(k)]
    if len(given) != 1:
        has = f"has {', '.join(given)}" if given else "has none"
        report.error(path, f"needs exactly one of exact, prefix, regex ({has})")
