"""Which Service a name asked for through the runtime's proxy means (pure)."""

from __future__ import annotations

from typing import Any

from headway.cluster.local.services.names import Target, resolve

SERVICE = {"metadata": {"name": "ledger-db"},
           "spec": {"ports": [{"port": 5432}, {"port": 9187}]},
           "status": {"loadBalancer": {"ingress": [{"ports": [{"port": 41001},
                                                                {"port": 41002}]}]}}}


POD = {"metadata": {"name": "ledger-db-1", "annotations": {
    "headway.dev/port": "42000", "headway.dev/ports": '{"5432": 42000, "9187": 42001}'}},
    "spec": {"subdomain": "ledger-db"},
    "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}


def lookup(kind: str, namespace: str, name: str) -> dict[str, Any] | None:
    if namespace != "payments":
        return None
    return {("Service", "ledger-db"): SERVICE, ("Pod", "ledger-db-1"): POD}.get((kind, name))


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
        'no Service or Pod named "ledger-db"')
    assert resolve("x.shop.svc", 80, namespace="payments", lookup=lookup).error
    assert resolve("ledger-db", 1, namespace="payments", lookup=lookup).error.endswith(
        "has no port 1 with a local address")
    assert resolve("localhost", 80, namespace="payments", lookup=lookup).error == ""


def test_a_pod_of_a_service_is_reached_by_pod_dot_service() -> None:
    for host in ("ledger-db-1.ledger-db", "ledger-db-1.ledger-db.payments",
                 "ledger-db-1.ledger-db.payments.svc.cluster.local"):
        assert resolve(host, 9187, namespace="payments", lookup=lookup) == Target(
            "127.0.0.1", 42001)
    missing = "ledger-db-7.ledger-db.payments.svc"
    assert resolve(missing, 80, namespace="payments", lookup=lookup).error == (
        f'no Service or Pod named "{missing}"')


def test_a_pod_that_is_not_ready_has_no_name_unless_the_service_publishes_it() -> None:
    unready = {**POD, "status": {"phase": "Running"}}
    publishing = {**SERVICE, "spec": {**SERVICE["spec"], "publishNotReadyAddresses": True}}

    def with_unready(service: dict[str, Any]) -> Any:
        def find(kind: str, namespace: str, name: str) -> dict[str, Any] | None:
            return service if kind == "Service" else unready if name == "ledger-db-1" else None
        return find

    host = "ledger-db-1.ledger-db.payments.svc"
    assert resolve(host, 5432, namespace="payments", lookup=with_unready(SERVICE)).error
    assert resolve(host, 5432, namespace="payments",
                   lookup=with_unready(publishing)) == Target("127.0.0.1", 42000)
