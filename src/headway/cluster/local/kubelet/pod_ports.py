"""Which local port a Pod's declared `containerPort` is, for processes that share 127.0.0.1.

Every Pod gets one port of its own (`headway.dev/port`, the first container's `PORT`). Its
first container's first declared `containerPort` *is* that port; each further port any of its
containers declares (`metrics: 9090` beside `http: 8080`, a sidecar's `admin: 15000`) gets a
local port of its own, chosen once and kept for the Pod's life in `headway.dev/ports`, a JSON
object from the declared number and name to the local port (a later container's first
declared port is also its `PORT`):

    headway.dev/ports: '{"8080": 41877, "http": 41877, "9090": 41878, "metrics": 41878}'

The process learns them as `PORT_<NAME>` / `PORT_<NUMBER>` (and `{port:NAME}` in the image
map), probes and Services find them by the number or name they give (`targetPort: metrics`).
Purely computational: the kubelet allocates and records, Services and probes read.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

__all__ = [
    "PORTS_ANNOTATION",
    "PORT_ANNOTATION",
    "all_declared",
    "assign_ports",
    "container_declared",
    "container_ports",
    "declared_ports",
    "local_port",
    "port_env",
    "recorded_ports",
]

PORT_ANNOTATION = "headway.dev/port"
PORTS_ANNOTATION = "headway.dev/ports"


def declared_ports(pod: Mapping[str, Any]) -> list[tuple[str, int]]:
    """(name, containerPort) of the first container, in order; malformed entries skipped."""
    containers = (pod.get("spec") or {}).get("containers") or []
    first = containers[0] if containers and isinstance(containers[0], dict) else {}
    return container_declared(first)


def container_declared(container: Mapping[str, Any]) -> list[tuple[str, int]]:
    """(name, containerPort) of one container, in order; malformed entries skipped."""
    found = []
    for entry in container.get("ports") or []:
        if isinstance(entry, dict) and isinstance(entry.get("containerPort"), int):
            found.append((str(entry.get("name") or ""), int(entry["containerPort"])))
    return found


def all_declared(pod: Mapping[str, Any]) -> list[tuple[str, int]]:
    """(name, containerPort) of every container, the first container's first."""
    containers = (pod.get("spec") or {}).get("containers") or []
    return [p for c in containers if isinstance(c, dict) for p in container_declared(c)]


def container_ports(container: Mapping[str, Any], assigned: Mapping[str, int]) -> dict[str, int]:
    """The part of the Pod's `assigned` ports that `container` declares (its `PORT_<NAME>`)."""
    own: dict[str, int] = {}
    for name, number in container_declared(container):
        if str(number) in assigned:
            own[str(number)] = assigned[str(number)]
            if name:
                own[name] = assigned[str(number)]
    return own


def recorded_ports(pod: Mapping[str, Any]) -> dict[str, int]:
    """The Pod's `headway.dev/ports`, or {} when absent or not a JSON object of ports."""
    raw = ((pod.get("metadata") or {}).get("annotations") or {}).get(PORTS_ANNOTATION)
    try:
        parsed = json.loads(str(raw)) if raw else {}
    except ValueError:
        return {}
    if not isinstance(parsed, dict):
        return {}
    return {str(k): v for k, v in parsed.items() if isinstance(v, int)}


def assign_ports(
    pod: Mapping[str, Any], pod_port: int, allocate: Callable[[], int]
) -> dict[str, int]:
    """Every declared port's local port, of every container: the first container's first is
    `pod_port`, the others keep what the Pod recorded or get `allocate()`d."""
    recorded = recorded_ports(pod)
    assigned: dict[str, int] = {}
    first = declared_ports(pod)[:1]
    for name, number in all_declared(pod):
        local = assigned.get(str(number)) or (
            pod_port if (name, number) in first else recorded.get(str(number)) or allocate()
        )
        assigned[str(number)] = local
        if name:
            assigned[name] = local
    return assigned


def local_port(pod: Mapping[str, Any], target: object) -> int | None:
    """Where a Service's `targetPort` (a number, a name, or None for the Pod's port) reaches
    the Pod; a port the Pod did not declare means its own port, as before any was declared.
    None while the Pod has no port yet."""
    raw = str(((pod.get("metadata") or {}).get("annotations") or {}).get(PORT_ANNOTATION) or "")
    if not raw.isdigit():
        return None
    if target is None:
        return int(raw)
    return recorded_ports(pod).get(str(target), int(raw))


def port_env(ports: Mapping[str, int]) -> dict[str, str]:
    """`PORT_HTTP`, `PORT_8080`, ... for each declared port (names upper-cased, `-` as `_`)."""
    return {f"PORT_{key.upper().replace('-', '_')}": str(port) for key, port in ports.items()}
