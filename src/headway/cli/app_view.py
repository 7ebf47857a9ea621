"""Text views for `headway app`: aligned tables, plain enough to grep and to test."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "app_details",
    "app_table",
    "describe_operation",
    "describe_state",
    "history_table",
    "table",
]


_ENDED = ("Succeeded", "Failed", "Error")


def describe_operation(operation: Mapping[str, Any]) -> str:
    """`headway.steering.apps.describe_operation`, imported when a view first needs it: the
    steering module brings the operation model, which `headway app ... --help` does not use."""
    from headway.steering import apps as steering

    return steering.describe_operation(operation)


def describe_state(state: Mapping[str, Any]) -> str:
    """`headway.steering.apps.describe_state`, imported when first needed (as above)."""
    from headway.steering import apps as steering

    return steering.describe_state(state)


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [len(h) for h in headers]
    for row in rows:
        widths = [max(w, len(c)) for w, c in zip(widths, row, strict=True)]
    lines = [headers, *rows]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in lines
    )


def _status(app: Mapping[str, Any]) -> Mapping[str, Any]:
    return app.get("status") or {}


def _revision(status: Mapping[str, Any]) -> str:
    sync = status.get("sync") or {}
    revision = sync.get("revision") or ",".join(sync.get("revisions") or [])
    return str(revision)[:12]


def app_table(apps: Sequence[Mapping[str, Any]]) -> str:
    rows = []
    for app in apps:
        status = _status(app)
        rows.append(
            [
                str(app["metadata"]["name"]),
                str(app["metadata"].get("namespace") or ""),
                str((app.get("spec") or {}).get("project") or ""),
                str((status.get("sync") or {}).get("status") or "Unknown"),
                str((status.get("health") or {}).get("status") or "Unknown"),
                str((status.get("operationState") or {}).get("phase") or ""),
                _revision(status),
            ]
        )
    return table(["NAME", "NAMESPACE", "PROJECT", "SYNC", "HEALTH", "OPERATION", "REVISION"], rows)


def app_details(app: Mapping[str, Any]) -> str:
    status = _status(app)
    spec = app.get("spec") or {}
    destination = spec.get("destination") or {}
    operation = status.get("operationState") or {}
    health = status.get("health") or {}
    lines = [
        f"Name:         {app['metadata']['name']}",
        f"Project:      {spec.get('project', '')}",
        f"Destination:  {destination.get('server') or destination.get('name')} "
        f"ns={destination.get('namespace', '')}",
        f"Sync Status:  {(status.get('sync') or {}).get('status', 'Unknown')} "
        f"to {_revision(status)}",
        f"Health:       {health.get('status', 'Unknown')}"
        + (f" ({health['message']})" if health.get("message") else ""),
    ]
    if isinstance(app.get("operation"), Mapping):
        requested = describe_operation(app["operation"])
        lines.append(f"Requested:    {requested} (waiting for the controller to start it)")
    if operation:
        label = "Operation:   " if operation.get("phase") not in _ENDED else "Last Result: "
        lines.append(f"{label} {describe_state(operation)}")
    for condition in status.get("conditions") or []:
        lines.append(f"Condition:    {condition.get('type')}: {condition.get('message')}")
    rows = [
        [
            str(r.get("group") or ""),
            str(r.get("kind")),
            str(r.get("namespace") or ""),
            str(r.get("name")),
            str(r.get("syncWave", 0)),
            str(r.get("status")) + (" (requires pruning)" if r.get("requiresPruning") else ""),
            str((r.get("health") or {}).get("status") or ""),
        ]
        for r in status.get("resources") or []
    ]
    headers = ["GROUP", "KIND", "NAMESPACE", "NAME", "WAVE", "STATUS", "HEALTH"]
    return "\n".join(lines) + "\n\n" + table(headers, rows)


def history_table(history: Sequence[Mapping[str, Any]]) -> str:
    rows = []
    for entry in history:
        who = entry.get("initiatedBy") or {}
        selected = entry.get("resources") or []
        scope = ",".join(f"{r.get('kind')}/{r.get('name')}" for r in selected) or "all"
        rows.append(
            [
                str(entry.get("id")),
                str(entry.get("deployedAt") or ""),
                str(entry.get("revision") or "")[:12],
                str(entry.get("phase") or "Succeeded")
                + (" (dry run)" if entry.get("dryRun") else ""),
                "automated" if who.get("automated") else str(who.get("username") or ""),
                scope,
            ]
        )
    return table(["ID", "DATE", "REVISION", "PHASE", "INITIATED BY", "RESOURCES"], rows)
