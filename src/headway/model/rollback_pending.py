"""The mark of an Application rolled back on the cluster while Git could not be written.

The annotation holds the commit still to push (JSON, written and drained by
`controllers.convergence.rollback_outbox`); while it is set the Application is diverged
from Git and automated sync holds (`controllers.app`). It lives here, below both
controller families, because each of them reads it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["ROLLBACK_PENDING_ANNOTATION", "diverged_from_git"]

ROLLBACK_PENDING_ANNOTATION = "headway.dev/rollback-pending"


def diverged_from_git(app: Mapping[str, Any]) -> str:
    """Why the cluster runs something Git does not say, or "" when it does not."""
    annotations = (app.get("metadata") or {}).get("annotations") or {}
    if not annotations.get(ROLLBACK_PENDING_ANNOTATION):
        return ""
    return (
        "rolled back on the cluster while Git could not be written; the revert commit is"
        " pushed as soon as Git is back, and automated sync holds until then"
        f" (annotation {ROLLBACK_PENDING_ANNOTATION})"
    )
