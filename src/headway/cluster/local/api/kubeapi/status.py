"""Kubernetes `Status` bodies: every error the API answers, and a delete's success.

Purely computational. The store raises `headway.cluster.errors`; `status_for` maps each to
the HTTP code and `reason` a Kubernetes API server gives (a client such as kubectl or
client-go switches on `reason` and `code`, and prints `message`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from headway.cluster.errors import (
    AlreadyExists,
    ClusterError,
    Conflict,
    Expired,
    FieldConflict,
    Invalid,
    NamespaceNotFound,
    NotFound,
    StaleVersion,
    UnknownKind,
)
from headway.model.yamlload import format_path

__all__ = ["ApiError", "Target", "status_body", "status_for", "success_body"]


@dataclass(frozen=True)
class Target:
    """What a request was about, for a Status' `details` and its message."""

    resource: str  # "deployments"
    group: str  # "apps" ("" for the core group)
    name: str = ""

    @property
    def qualified(self) -> str:
        return f"{self.resource}.{self.group}" if self.group else self.resource


class ApiError(Exception):
    """An error the API answers with a Status: code, reason, message and causes."""

    def __init__(
        self, code: int, reason: str, message: str, *, causes: list[dict[str, str]] | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.causes = causes or []


def status_body(error: ApiError, target: Target | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": error.message,
        "reason": error.reason,
        "code": error.code,
    }
    details: dict[str, Any] = {}
    if target is not None:
        if target.name:
            details["name"] = target.name
        details["group"] = target.group
        details["kind"] = target.resource
    if error.causes:
        details["causes"] = error.causes
    if details:
        body["details"] = details
    return body


def success_body(target: Target, uid: str) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": {"name": target.name, "group": target.group, "kind": target.resource,
                    "uid": uid},
    }


def status_for(error: ClusterError, target: Target) -> ApiError:
    """The API error a store error is, with the message Kubernetes would print."""
    what = f'{target.qualified} "{target.name}"' if target.name else target.qualified
    if isinstance(error, FieldConflict):
        return _field_conflict(error)
    if isinstance(error, AlreadyExists):
        return ApiError(409, "AlreadyExists", f"{what} already exists")
    if isinstance(error, NamespaceNotFound):
        return ApiError(404, "NotFound", f'namespaces "{error.namespace}" not found')
    if isinstance(error, NotFound):
        return ApiError(404, "NotFound", f"{what} not found")
    if isinstance(error, UnknownKind):
        return ApiError(404, "NotFound", f"the server could not find the requested resource "
                                         f"({error})")
    if isinstance(error, StaleVersion):
        return ApiError(409, "Conflict", f"Operation cannot be fulfilled on {what}: the object "
                        f"has been modified; please apply your changes to the latest version "
                        f"and try again ({error})")
    if isinstance(error, Conflict):
        return ApiError(409, "Conflict", f"Operation cannot be fulfilled on {what}: {error}")
    if isinstance(error, Expired):
        return ApiError(410, "Expired", str(error))
    if isinstance(error, Invalid):
        causes = [{"type": "FieldValueInvalid", "message": message, "field": format_path(path)}
                  for path, message in error.causes]
        return ApiError(422, "Invalid", f"{what} is invalid: {error}", causes=causes)
    return ApiError(500, "InternalError", f"{what}: {error}")


def _field_conflict(error: FieldConflict) -> ApiError:
    causes = [
        {"type": "FieldManagerConflict", "message": f'conflict with "{manager}"', "field": path}
        for path, manager in error.conflicts
    ]
    count = len(causes)
    listed = "\n".join(f'- conflict with "{manager}": {path}' for path, manager in error.conflicts)
    message = f"Apply failed with {count} conflict{'s' if count != 1 else ''}:\n{listed}"
    return ApiError(409, "Conflict", message, causes=causes)
