"""The variables by which a container finds the Services of its namespace. Purely computational.

As the kubelet does for every Service that exists when a container starts (unless the Pod
sets `enableServiceLinks: false`), with the Service's local address in place of a cluster
IP: `127.0.0.1` and the local port the runtime listens on for each `spec.ports` entry
(`status.loadBalancer.ingress[0].ports`, in order). For a Service `ledger-db` with port
5432 named `pg`:

    LEDGER_DB_SERVICE_HOST=127.0.0.1
    LEDGER_DB_SERVICE_PORT=41877            # the first port's local port
    LEDGER_DB_SERVICE_PORT_PG=41877         # one per named port
    LEDGER_DB_PORT=tcp://127.0.0.1:41877    # Docker-link style, as Kubernetes also sets
    LEDGER_DB_PORT_5432_TCP=tcp://127.0.0.1:41877
    LEDGER_DB_PORT_5432_TCP_PROTO=tcp
    LEDGER_DB_PORT_5432_TCP_PORT=41877
    LEDGER_DB_PORT_5432_TCP_ADDR=127.0.0.1

The `_PORT_<N>_` names keep the Service's own port number, so names written against a
Kubernetes manifest are found; the values are local. A headless Service (`clusterIP: None`)
and one not yet given its local ports get none, as a Service without a cluster IP gets none.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from headway.cluster.local.kubelet.network import LOOPBACK

__all__ = ["service_links"]


def _env_name(name: str) -> str:
    return name.upper().replace("-", "_").replace(".", "_")


def _local_ports(service: Mapping[str, Any]) -> list[int]:
    ingress = ((service.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
    if not ingress:
        return []
    return [int(p["port"]) for p in ingress[0].get("ports") or [] if isinstance(p.get("port"), int)]


def _one_service(service: Mapping[str, Any]) -> dict[str, str]:
    spec = service.get("spec") or {}
    if spec.get("clusterIP") == "None":
        return {}
    entries = [p for p in spec.get("ports") or [] if isinstance(p, dict)]
    local = _local_ports(service)
    if not entries or len(local) < len(entries):
        return {}
    prefix = _env_name(str(service["metadata"]["name"]))
    env = {f"{prefix}_SERVICE_HOST": LOOPBACK, f"{prefix}_SERVICE_PORT": str(local[0])}
    first_proto = str(entries[0].get("protocol") or "TCP").lower()
    env[f"{prefix}_PORT"] = f"{first_proto}://{LOOPBACK}:{local[0]}"
    for entry, port in zip(entries, local, strict=False):
        if entry.get("name"):
            env[f"{prefix}_SERVICE_PORT_{_env_name(str(entry['name']))}"] = str(port)
        proto = str(entry.get("protocol") or "TCP")
        link = f"{prefix}_PORT_{entry.get('port')}_{proto.upper()}"
        env[link] = f"{proto.lower()}://{LOOPBACK}:{port}"
        env[f"{link}_PROTO"] = proto.lower()
        env[f"{link}_PORT"] = str(port)
        env[f"{link}_ADDR"] = LOOPBACK
    return env


def service_links(pod: Mapping[str, Any], services: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """The variables for `services` (the Pod's namespace's), or {} when the Pod turned them
    off; later names win, as the kubelet's order does not matter for distinct Services."""
    if (pod.get("spec") or {}).get("enableServiceLinks") is False:
        return {}
    env: dict[str, str] = {}
    for service in sorted(services, key=lambda s: str(s["metadata"]["name"])):
        if not service["metadata"].get("deletionTimestamp"):
            env.update(_one_service(service))
    return env
