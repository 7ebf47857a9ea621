"""Which application a live object belongs to, and resources shared between applications.

Argo CD tracks ownership by the `argocd.argoproj.io/tracking-id` annotation
(`<app>:<group>/<kind>:<namespace>/<name>`) or, with label tracking, by the
`app.kubernetes.io/instance` label. With `FailOnSharedResource=true` a sync that would apply
a resource another application owns fails before anything is applied.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from headway.sync.resources import annotation
from headway.sync.tasks import SyncTask

__all__ = ["INSTANCE_LABEL", "TRACKING_ANNOTATION", "owning_app", "shared_resource_messages"]

TRACKING_ANNOTATION = "argocd.argoproj.io/tracking-id"
INSTANCE_LABEL = "app.kubernetes.io/instance"


def owning_app(obj: Mapping[str, Any]) -> str | None:
    tracking = annotation(obj, TRACKING_ANNOTATION)
    if tracking and ":" in tracking:
        return tracking.split(":", 1)[0]
    labels = (obj.get("metadata") or {}).get("labels") or {}
    value = labels.get(INSTANCE_LABEL)
    return str(value) if value else None


def shared_resource_messages(tasks: Iterable[SyncTask], *, app_name: str) -> list[str]:
    """Argo CD's wording: `Kind/name is part of applications <this> and <other>`."""
    messages = []
    for task in tasks:
        if task.live is None or task.is_prune:
            continue
        owner = owning_app(task.live)
        if owner is not None and owner != app_name:
            messages.append(f"{task.key} is part of applications {app_name} and {owner}")
    return messages
