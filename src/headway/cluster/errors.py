"""The errors every `Cluster` backend raises; third-party errors are translated at the edge."""

from __future__ import annotations

__all__ = [
    "AlreadyExists",
    "ClusterError",
    "Conflict",
    "Expired",
    "FieldConflict",
    "Forbidden",
    "Gone",
    "Invalid",
    "NamespaceNotFound",
    "NotFound",
    "StaleVersion",
    "Throttled",
    "UnknownKind",
]


class ClusterError(Exception):
    """Base of every error a `Cluster` raises."""


class NotFound(ClusterError):
    """The object does not exist."""


class NamespaceNotFound(NotFound):
    """A write into a namespace that does not exist."""

    def __init__(self, message: str, namespace: str) -> None:
        super().__init__(message)
        self.namespace = namespace


class Conflict(ClusterError):
    """A write carried a stale resourceVersion, or the object already exists."""


class StaleVersion(Conflict):
    """A write's resourceVersion precondition names a version the object has moved past
    (Kubernetes' optimistic-concurrency 409, "the object has been modified"): read it again
    and retry."""


class AlreadyExists(Conflict):
    """A create named an object that exists (Kubernetes' `AlreadyExists`, also a 409)."""


class FieldConflict(ClusterError):
    """Apply would change fields another field manager owns."""

    def __init__(self, message: str, conflicts: list[tuple[str, str]]) -> None:
        super().__init__(message)
        self.conflicts = conflicts  # (field path, owning manager)


class Invalid(ClusterError):
    """The object is malformed for its kind. `causes` names the fields at fault when they
    are known (each a path in the object and a message), so a caller holding the source
    file can point at their lines."""

    def __init__(
        self, message: str, causes: tuple[tuple[tuple[str | int, ...], str], ...] = ()
    ) -> None:
        super().__init__(message)
        self.causes = causes


class Forbidden(ClusterError):
    """The API refused the request for this identity (Kubernetes' `403 Forbidden`, RBAC):
    a missing permission to grant, not a failure to retry."""


class Throttled(ClusterError):
    """The API kept answering `429 Too Many Requests` after every bounded retry."""


class UnknownKind(ClusterError):
    """The cluster does not serve this apiVersion/kind."""


class Gone(ClusterError):
    """Kubernetes' `410 Gone`: a resourceVersion or continue token is older than the
    cluster's history reaches. The caller lists again and resumes from the new list."""


class Expired(Gone):
    """A watch or a list continuation cannot resume from so old a resourceVersion (the
    API server's 410 with reason `Expired`); catch `Gone` to handle every 410."""
