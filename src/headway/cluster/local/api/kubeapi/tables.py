"""`Table` responses (`meta.k8s.io/v1`), which `kubectl get` asks for. Purely computational.

Built-in kinds get the columns kubectl users know (a Pod's READY, STATUS, RESTARTS; a
Deployment's READY, UP-TO-DATE, AVAILABLE...); a custom kind gets its CRD's
`additionalPrinterColumns` (simple JSON paths), else NAME and AGE.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from headway.cluster.local.api.kubeapi.catalog import ApiKind
from headway.kube.pod_columns import pod_ready_text, pod_restarts, pod_status_text
from headway.kubetime import parse_time
from headway.model.obj import Obj

__all__ = ["human_duration", "table", "wants_table"]

Cell = Callable[[Obj, datetime], Any]


def wants_table(accept: str) -> bool:
    """Whether an Accept header asks for a Table first (as `kubectl get` does)."""
    first = accept.split(",", maxsplit=1)[0].replace(" ", "")
    return "as=Table" in first and "g=meta.k8s.io" in first


def human_duration(seconds: float) -> str:
    """Kubernetes' short age format: 45s, 3m20s, 5h, 3d4h, 2y."""
    if seconds < -1:
        return "<invalid>"
    s = max(0, int(seconds))
    minutes, hours, days = s // 60, s // 3600, s // 86400
    if s < 120:
        return f"{s}s"
    if minutes < 10:
        return f"{minutes}m{s % 60}s" if s % 60 else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    if hours < 8:
        return f"{hours}h{minutes % 60}m" if minutes % 60 else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 192:
        return f"{days}d{hours % 24}h" if hours % 24 else f"{days}d"
    if days < 730:
        return f"{days}d"
    years = days // 365
    return f"{years}y{days % 365}d" if years < 8 else f"{years}y"


def _age(obj: Obj, now: datetime) -> str:
    created = parse_time(obj["metadata"].get("creationTimestamp"))
    return "<unknown>" if created is None else human_duration((now - created).total_seconds())


def _path(obj: Obj, *keys: str) -> Any:
    node: Any = obj
    for key in keys:
        node = node.get(key) if isinstance(node, dict) else None
    return node


def _count(obj: Obj, *keys: str) -> int:
    value = _path(obj, *keys)
    return value if isinstance(value, int) else 0


def _pod_ready(obj: Obj, _: datetime) -> str:
    return pod_ready_text(obj)


def _pod_status(obj: Obj, _: datetime) -> str:
    return pod_status_text(obj)


def _restarts(obj: Obj, _: datetime) -> int:
    return pod_restarts(obj)


def _service_ports(obj: Obj, _: datetime) -> str:
    ports = _path(obj, "spec", "ports") or []
    return ",".join(f"{p.get('port')}/{p.get('protocol', 'TCP')}" for p in ports) or "<none>"


_NAME = ("Name", "string", "name")
_AGE: tuple[str, str, str, Cell] = ("Age", "string", "", _age)
_COLUMNS: dict[str, list[tuple[str, str, str, Cell]]] = {
    "pods": [("Ready", "string", "", _pod_ready), ("Status", "string", "", _pod_status),
             ("Restarts", "integer", "", _restarts)],
    "deployments": [
        ("Ready", "string", "", lambda o, _: f"{_count(o, 'status', 'readyReplicas')}/"
                                              f"{_count(o, 'spec', 'replicas')}"),
        ("Up-to-date", "integer", "", lambda o, _: _count(o, 'status', 'updatedReplicas')),
        ("Available", "integer", "", lambda o, _: _count(o, 'status', 'availableReplicas')),
    ],
    "replicasets": [
        ("Desired", "integer", "", lambda o, _: _count(o, "spec", "replicas")),
        ("Current", "integer", "", lambda o, _: _count(o, "status", "replicas")),
        ("Ready", "integer", "", lambda o, _: _count(o, "status", "readyReplicas")),
    ],
    "services": [
        ("Type", "string", "", lambda o, _: _path(o, "spec", "type") or "ClusterIP"),
        ("Cluster-IP", "string", "", lambda o, _: _path(o, "spec", "clusterIP") or "<none>"),
        ("Port(s)", "string", "", _service_ports),
    ],
    "namespaces": [("Status", "string", "",
                    lambda o, _: _path(o, "status", "phase") or "Active")],
    "configmaps": [("Data", "integer", "",
                    lambda o, _: len(o.get("data") or {}) + len(o.get("binaryData") or {}))],
    "jobs": [("Completions", "string", "", lambda o, _: f"{_count(o, 'status', 'succeeded')}/"
                                                        f"{_path(o, 'spec', 'completions') or 1}")],
    "statefulsets": [("Ready", "string", "", lambda o, _: f"{_count(o, 'status', 'readyReplicas')}/"
                                                         f"{_replicas(o)}")],
    "daemonsets": [
        ("Desired", "integer", "", lambda o, _: _count(o, "status", "desiredNumberScheduled")),
        ("Current", "integer", "", lambda o, _: _count(o, "status", "currentNumberScheduled")),
        ("Ready", "integer", "", lambda o, _: _count(o, "status", "numberReady")),
        ("Up-to-date", "integer", "", lambda o, _: _count(o, "status", "updatedNumberScheduled")),
        ("Available", "integer", "", lambda o, _: _count(o, "status", "numberAvailable")),
    ],
    "persistentvolumeclaims": [
        ("Status", "string", "", lambda o, _: _path(o, "status", "phase") or "Pending"),
        ("Volume", "string", "", lambda o, _: _path(o, "spec", "volumeName") or ""),
        ("Capacity", "string", "", lambda o, _: _path(o, "status", "capacity", "storage") or ""),
    ],
    "persistentvolumes": [
        ("Capacity", "string", "", lambda o, _: _path(o, "spec", "capacity", "storage") or ""),
        ("Reclaim Policy", "string", "",
         lambda o, _: _path(o, "spec", "persistentVolumeReclaimPolicy") or "Retain"),
        ("Status", "string", "", lambda o, _: _path(o, "status", "phase") or "Pending"),
        ("Claim", "string", "", lambda o, _: _claim_of(o)),
    ],
}


def _replicas(obj: Obj) -> int:
    value = _path(obj, "spec", "replicas")
    return value if isinstance(value, int) else 1


def _claim_of(volume: Obj) -> str:
    ref = _path(volume, "spec", "claimRef") or {}
    return f"{ref.get('namespace')}/{ref.get('name')}" if isinstance(ref, dict) and ref else ""


def _containers(obj: Obj, field: str) -> str:
    spec = _path(obj, "spec", "template", "spec") or {}
    return ",".join(str(c.get(field, "")) for c in spec.get("containers") or []) or "<none>"


def _selector_text(obj: Obj) -> str:
    labels = _path(obj, "spec", "selector", "matchLabels") or _path(obj, "spec", "selector")
    if not isinstance(labels, dict) or not all(isinstance(v, str) for v in labels.values()):
        return "<none>"
    return ",".join(f"{k}={v}" for k, v in labels.items()) or "<none>"


# The columns `kubectl get -o wide` adds (priority 1: hidden otherwise).
_WIDE_COLUMNS: dict[str, list[tuple[str, str, str, Cell]]] = {
    "pods": [("IP", "string", "", lambda o, _: _path(o, "status", "podIP") or "<none>"),
             ("Node", "string", "", lambda o, _: _path(o, "spec", "nodeName") or "<none>")],
    "deployments": [("Containers", "string", "", lambda o, _: _containers(o, "name")),
                    ("Images", "string", "", lambda o, _: _containers(o, "image")),
                    ("Selector", "string", "", lambda o, _: _selector_text(o))],
    "replicasets": [("Containers", "string", "", lambda o, _: _containers(o, "name")),
                    ("Images", "string", "", lambda o, _: _containers(o, "image")),
                    ("Selector", "string", "", lambda o, _: _selector_text(o))],
    "services": [("Selector", "string", "", lambda o, _: _selector_text(o))],
}


def _last_seen(obj: Obj, now: datetime) -> str:
    seen = obj.get("lastTimestamp") or obj.get("eventTime") or \
        obj["metadata"].get("creationTimestamp")
    when = parse_time(seen)
    return "<unknown>" if when is None else human_duration((now - when).total_seconds())


def _involved(obj: Obj, _: datetime) -> str:
    involved = obj.get("involvedObject") or {}
    return f"{str(involved.get('kind', '')).lower()}/{involved.get('name', '')}"


# `kubectl get events` columns; the Event's own name only with -o wide, as in Kubernetes.
_EVENT_COLUMNS: list[tuple[str, str, str, Cell]] = [
    ("Last Seen", "string", "", _last_seen),
    ("Type", "string", "", lambda o, _: o.get("type") or ""),
    ("Reason", "string", "", lambda o, _: o.get("reason") or ""),
    ("Object", "string", "", _involved),
    ("Message", "string", "", lambda o, _: o.get("message") or ""),
]


def _custom_cells(kind: ApiKind) -> list[tuple[str, str, str, Cell]]:
    def cell(json_path: str, column_type: str) -> Cell:
        keys = [k for k in json_path.strip().lstrip(".").split(".") if k]

        def value(obj: Obj, now: datetime) -> Any:
            found = _path(obj, *keys)
            if column_type == "date" and isinstance(found, str):
                when = parse_time(found)
                return human_duration((now - when).total_seconds()) if when else found
            return found if found is not None else "<none>"

        return value

    return [(c.name, "string" if c.type == "date" else c.type, "", cell(c.json_path, c.type))
            for c in kind.columns]


def table(kind: ApiKind, objs: list[Obj], *, now: datetime, include: str,
          list_meta: dict[str, Any] | None = None) -> dict[str, Any]:
    """A Table of `objs`; `include` is `includeObject` (None, Metadata or Object)."""
    name: tuple[str, str, str, Cell] = (*_NAME, lambda o, _: o["metadata"]["name"])
    wide_only: set[str] = set()
    if kind.plural == "events" and not kind.group:
        cells, wide_only = [*_EVENT_COLUMNS, name], {"Name"}
    else:
        extra = _custom_cells(kind) if kind.columns else _COLUMNS.get(kind.plural, [])
        cells = [name, *extra]
        if not any(c[0].lower() == "age" for c in extra):
            cells.append(_AGE)
        wide = [] if kind.columns else _WIDE_COLUMNS.get(kind.plural, [])
        cells += wide
        wide_only = {c[0] for c in wide}
    definitions = [
        {"name": title, "type": kind_of, "format": fmt, "description": title,
         "priority": 1 if title in wide_only else 0}
        for title, kind_of, fmt, _ in cells
    ]
    rows = [{"cells": [cell(o, now) for *_, cell in cells], "object": _row_object(o, include)}
            for o in objs]
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": list_meta or {},
            "columnDefinitions": definitions, "rows": rows}


def _row_object(obj: Obj, include: str) -> Obj | None:
    if include == "None":
        return None
    if include == "Object":
        return obj
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
            "metadata": obj["metadata"]}
