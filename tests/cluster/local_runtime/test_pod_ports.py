"""Declared containerPorts as local ports (pure): chosen once, found by number or name."""

from __future__ import annotations

import json
from itertools import count
from typing import Any

from headway.cluster.local.kubelet.pod_ports import (
    assign_ports,
    container_ports,
    local_port,
    port_env,
)


def pod(ports: list[dict[str, Any]], annotations: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "metadata": {"name": "p", "annotations": annotations or {}},
        "spec": {"containers": [{"name": "app", "ports": ports}, {"name": "side"}]},
    }


DECLARED = [{"name": "http", "containerPort": 8080}, {"name": "metrics", "containerPort": 9090},
            {"containerPort": 7000}]


def test_the_first_declared_port_is_the_pods_port_the_others_get_their_own() -> None:
    fresh = count(50000)
    assigned = assign_ports(pod(DECLARED), 41000, lambda: next(fresh))
    assert assigned == {"8080": 41000, "http": 41000, "9090": 50000, "metrics": 50000,
                        "7000": 50001}
    # after a runtime restart the recorded ports are kept, nothing new is allocated
    recorded = pod(DECLARED, {"headway.dev/ports": json.dumps(assigned)})
    assert assign_ports(recorded, 41000, lambda: 1 / 0) == assigned  # type: ignore[arg-type,return-value]
    assert port_env(assigned)["PORT_METRICS"] == "50000"
    assert port_env(assigned)["PORT_9090"] == "50000"


def test_a_service_target_port_finds_the_declared_port_by_number_or_name() -> None:
    annotations = {"headway.dev/port": "41000",
                   "headway.dev/ports": json.dumps({"8080": 41000, "metrics": 50000})}
    declared = pod(DECLARED, annotations)
    assert local_port(declared, "metrics") == 50000
    assert local_port(declared, 8080) == 41000
    assert local_port(declared, None) == 41000
    assert local_port(declared, "undeclared") == 41000  # as before: the Pod's one port
    assert local_port(pod(DECLARED), "metrics") is None  # no port yet
    broken = pod(DECLARED, {"headway.dev/port": "41000", "headway.dev/ports": "{oops"})
    assert local_port(broken, "metrics") == 41000


def test_every_containers_declared_ports_get_local_ports_of_their_own() -> None:
    two: dict[str, Any] = {
        "metadata": {"name": "p"},
        "spec": {"containers": [
            {"name": "app", "ports": [{"name": "http", "containerPort": 8080}]},
            {"name": "proxy", "ports": [{"name": "admin", "containerPort": 15000},
                                        {"containerPort": 15090}]},
        ]},
    }
    fresh = count(50000)
    assigned = assign_ports(two, 41000, lambda: next(fresh))
    assert assigned == {"8080": 41000, "http": 41000, "15000": 50000, "admin": 50000,
                        "15090": 50001}
    sidecar = two["spec"]["containers"][1]
    assert container_ports(sidecar, assigned) == {"15000": 50000, "admin": 50000,
                                                  "15090": 50001}
    assert container_ports(two["spec"]["containers"][0], assigned) == {"8080": 41000,
                                                                       "http": 41000}
    annotated = {**two, "metadata": {"name": "p", "annotations": {
        "headway.dev/port": "41000", "headway.dev/ports": json.dumps(assigned)}}}
    assert local_port(annotated, "admin") == 50000
    assert local_port(annotated, 15090) == 50001
