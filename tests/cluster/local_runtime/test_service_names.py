"""Which Service a name asked for through the runtime's proxy means (pure)."""

from __future__ import annotations

from typing import Any

from headway.cluster.local.services.names import Target, resolve

SERVICE = {"metadata": {"name": "ledger-db"},
           "spec": {"ports": [{"port": 5432}, {"port": 9187}]},
           "status": {"loadBalancer": {"ingress": [{"ports": [{"port": 41001},
                                                                {"port": 41002}]}]}}}


def lookup(namespace: str, name: str) -> dict[str, Any] | None:
    return SERVICE if (namespace, name) == ("payments", "ledger-db") else None


def test_the_cluster_names_of_a_service_reach_its_local_port() -> None:
    for host in ("ledger-db", "ledger-db.payments", "ledger-db.payments.svc",
                 "Ledger-DB.payments.svc.cluster.local."):
        assert resolve(host, 5432, namespace="payments", lookup=lookup) == Target(
            "127.0.0.1", 41001)
    assert resolve("ledger-db", 9187, namespace="payments", lookup=lookup).port == 41002


def test_other_names_pass_through_and_unknown_cluster_names_are_errors() -> None:
    assert resolve("example.com", 443, namespace="payments", lookup=lookup) == Target(
        "example.com", 443)
    assert resolve("api.github.com", 443, namespace="payments", lookup=lookup).error == ""
    assert resolve("ledger-db", 5432, namespace="shop", lookup=lookup).error == (
        'no Service "ledger-db" in namespace "shop"')
    assert resolve("x.shop.svc", 80, namespace="payments", lookup=lookup).error
    assert resolve("ledger-db", 1, namespace="payments", lookup=lookup).error.endswith(
        "has no port 1 with a local address")
    assert resolve("localhost", 80, namespace="payments", lookup=lookup).error == ""
