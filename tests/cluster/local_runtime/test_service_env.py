"""The Service variables a container starts with (pure): names as Kubernetes makes them,
values the Service's local address."""

from __future__ import annotations

from typing import Any

from headway.cluster.local.kubelet.service_env import service_links


def svc(name: str, ports: list[dict[str, Any]], local: list[int], **spec: Any) -> dict[str, Any]:
    status = {"loadBalancer": {"ingress": [{"ip": "127.0.0.1",
                                            "ports": [{"port": p} for p in local]}]}}
    return {"metadata": {"name": name}, "spec": {"ports": ports, **spec}, "status": status}


POD: dict[str, Any] = {"metadata": {"name": "p"}, "spec": {}}


def test_each_service_gives_host_port_named_ports_and_link_variables() -> None:
    ledger = svc("ledger-db", [{"name": "pg", "port": 5432, "targetPort": "pg"},
                               {"name": "metrics", "port": 9187, "protocol": "TCP"}],
                 [41877, 41878])
    env = service_links(POD, [ledger])
    assert env == {
        "LEDGER_DB_SERVICE_HOST": "127.0.0.1",
        "LEDGER_DB_SERVICE_PORT": "41877",
        "LEDGER_DB_SERVICE_PORT_PG": "41877",
        "LEDGER_DB_SERVICE_PORT_METRICS": "41878",
        "LEDGER_DB_PORT": "tcp://127.0.0.1:41877",
        "LEDGER_DB_PORT_5432_TCP": "tcp://127.0.0.1:41877",
        "LEDGER_DB_PORT_5432_TCP_PROTO": "tcp",
        "LEDGER_DB_PORT_5432_TCP_PORT": "41877",
        "LEDGER_DB_PORT_5432_TCP_ADDR": "127.0.0.1",
        "LEDGER_DB_PORT_9187_TCP": "tcp://127.0.0.1:41878",
        "LEDGER_DB_PORT_9187_TCP_PROTO": "tcp",
        "LEDGER_DB_PORT_9187_TCP_PORT": "41878",
        "LEDGER_DB_PORT_9187_TCP_ADDR": "127.0.0.1",
    }


def test_headless_unready_and_switched_off_services_give_nothing() -> None:
    headless = svc("peers", [{"port": 80}], [41000], clusterIP="None")
    unready = svc("new", [{"port": 80}], [])
    assert service_links(POD, [headless, unready]) == {}
    off = {"metadata": {"name": "p"}, "spec": {"enableServiceLinks": False}}
    assert service_links(off, [svc("web", [{"port": 80}], [41000])]) == {}
