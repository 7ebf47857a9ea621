"""What an API server's error answer means, as a `headway.cluster.errors` error.

Purely computational. Kubernetes answers every failure with a `Status` object (`code`,
`reason`, `message`, `details.causes`); the mapping follows the codes and reasons the API
reference documents, so it holds for kube-apiserver and for the local runtime's API alike:

| code | reason / shape | error |
|---|---|---|
| 404 | a `details.name` (an object) | `NotFound` |
| 404 | `namespaces "X" not found` | `NamespaceNotFound` |
| 404 | no name: the path itself is not served | `UnknownKind` |
| 409 | `AlreadyExists` | `AlreadyExists` |
| 409 | causes of type `FieldManagerConflict` | `FieldConflict` with (field, manager) |
| 409 | no causes | `Conflict` (a stale resourceVersion) |
| 410 | `Expired` / `Gone` | `Expired` |
| 422 / 400 | `Invalid` / `BadRequest` | `Invalid` |
| 403 | `Forbidden` | `Forbidden` |
"""

from __future__ import annotations

import email.utils
import json
import re
import time
from typing import Any

from headway.cluster import errors

__all__ = ["error_for", "parse_status", "retry_after_seconds"]

# kube-apiserver's fixed wording for a stale resourceVersion (its OptimisticLockErrorMsg);
# a 409 without causes also answers a uid precondition, which is no stale version.
_OPTIMISTIC_LOCK = "the object has been modified"
_MANAGER = re.compile(r'conflict with "([^"]*)"')
_NAMESPACE = re.compile(r'^namespaces "([^"]*)" not found')


def parse_status(body: bytes) -> dict[str, Any]:
    """The Status in an error body; an empty one when the body is not JSON (a proxy's page)."""
    try:
        parsed = json.loads(body or b"{}")
    except ValueError:
        return {"message": body.decode("utf-8", "replace")[:500]}
    return parsed if isinstance(parsed, dict) else {}


def error_for(code: int, status: dict[str, Any], *, what: str) -> errors.ClusterError:
    """The error an answer with HTTP `code` and Status `status` is; `what` names the request
    ("GET apps/v1 Deployment prod/web") for messages whose Status says little."""
    message = str(status.get("message") or f"HTTP {code}")
    raw_details = status.get("details")
    details: dict[str, Any] = raw_details if isinstance(raw_details, dict) else {}
    reason = str(status.get("reason") or "")
    if code == 404:
        return _not_found(message, details, what=what)
    if code == 409:
        return _conflict(message, reason, details)
    if code == 410:
        return errors.Expired(message)
    if code in (400, 422):
        return errors.Invalid(message)
    if code == 403:
        return errors.Forbidden(f"{what}: {message}")
    if code == 429:
        return errors.Throttled(f"{what}: {message}")
    return errors.ClusterError(f"{what}: HTTP {code} {reason}: {message}".rstrip(": "))


def _not_found(message: str, details: dict[str, Any], *, what: str) -> errors.ClusterError:
    namespace = _NAMESPACE.match(message)
    if namespace:
        name = namespace.group(1)
        return errors.NamespaceNotFound(f"{what}: namespace '{name}' not found", name)
    if details.get("name"):
        return errors.NotFound(f"{what}: {message}")
    return errors.UnknownKind(f"{what}: {message}")


def _conflict(message: str, reason: str, details: dict[str, Any]) -> errors.ClusterError:
    if reason == "AlreadyExists":
        return errors.AlreadyExists(message)
    causes = [c for c in details.get("causes") or [] if isinstance(c, dict)]
    fields = [c for c in causes if c.get("type") == "FieldManagerConflict"]
    if not fields and _OPTIMISTIC_LOCK in message:
        return errors.StaleVersion(message)
    if not fields:
        return errors.Conflict(message)
    conflicts = []
    for cause in fields:
        owner = _MANAGER.search(str(cause.get("message", "")))
        conflicts.append((str(cause.get("field", "")), owner.group(1) if owner else ""))
    return errors.FieldConflict(message, conflicts)


def retry_after_seconds(header: str | None, *, default: float, now: float | None = None) -> float:
    """How long a `Retry-After` header (seconds, or an HTTP date) asks a client to wait;
    `default` when it is absent or unreadable."""
    if not header:
        return default
    try:
        return max(0.0, float(header))
    except ValueError:
        pass
    when = email.utils.parsedate_to_datetime(header) if _looks_like_date(header) else None
    if when is None:
        return default
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _looks_like_date(header: str) -> bool:
    try:
        email.utils.parsedate_to_datetime(header)
    except (TypeError, ValueError):
        return False
    return True
