"""Reading an Istio Gateway and the VirtualServices bound to it: routes by Host."""

from __future__ import annotations

from typing import Any

from headway.cluster.local.mesh.gateway_plan import GatewayRoute, choose_route, plan_gateway


def gateway(*servers: dict[str, Any], name: str = "edge") -> dict[str, Any]:
    return {
        "apiVersion": "networking.istio.io/v1beta1",
        "kind": "Gateway",
        "metadata": {"name": name, "namespace": "shop"},
        "spec": {"selector": {"istio": "ingressgateway"}, "servers": list(servers)},
    }


def http_server(*hosts: str, protocol: str = "HTTP") -> dict[str, Any]:
    return {"port": {"number": 80, "name": "http", "protocol": protocol}, "hosts": list(hosts)}


def bound(name: str, hosts: list[str], gateways: list[str], namespace: str = "shop") -> Any:
    return {
        "apiVersion": "networking.istio.io/v1beta1",
        "kind": "VirtualService",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"hosts": hosts, "gateways": gateways, "http": []},
    }


ROUTERS = {
    "shop/checkout": ("127.0.0.1", 41001),
    "shop/search": ("127.0.0.1", 41002),
    "web/landing": ("127.0.0.1", 41003),
}


def test_only_virtual_services_that_name_the_gateway_are_routed() -> None:
    services = [
        bound("checkout", ["checkout.example.com"], ["edge"]),
        bound("search", ["search.example.com"], ["mesh"]),  # sidecars only, not the edge
        bound("landing", ["www.example.com"], ["shop/edge"], namespace="web"),
    ]
    plan = plan_gateway(gateway(http_server("*")), services, addresses=ROUTERS)
    assert plan.routes == (
        GatewayRoute("checkout.example.com", "shop/checkout", "127.0.0.1", 41001),
        GatewayRoute("www.example.com", "web/landing", "127.0.0.1", 41003),
    )
    assert plan.unsupported == ()


def test_the_most_specific_host_wins_and_ports_are_ignored() -> None:
    services = [
        bound("search", ["*"], ["edge"]),
        bound("checkout", ["*.pay.example.com", "checkout.example.com"], ["edge"]),
    ]
    plan = plan_gateway(gateway(http_server("*")), services, addresses=ROUTERS)

    def to(host: str | None) -> str:
        route = choose_route(plan.routes, host)
        return route.virtual_service if route else ""

    assert to("checkout.example.com:8080") == "shop/checkout"
    assert to("eu.pay.example.com") == "shop/checkout"
    assert to("pay.example.com") == "shop/search"
    assert to(None) == "shop/search"


def test_hosts_the_gateway_does_not_accept_are_not_routed_and_said_so() -> None:
    services = [bound("checkout", ["*"], ["edge"]), bound("search", ["search.internal"], ["edge"])]
    edge = gateway(http_server("shop/*.example.com"))
    plan = plan_gateway(edge, services, addresses=ROUTERS)
    assert [r.pattern for r in plan.routes] == ["*.example.com"]  # the narrower of * and it
    assert choose_route(plan.routes, "search.internal") is None
    assert plan.unsupported == (
        "VirtualService shop/search: host search.internal is not accepted by any plain HTTP "
        "server of this Gateway",
    )


def test_tls_servers_are_listed_as_not_realized() -> None:
    tls = {**http_server("*", protocol="HTTPS"), "tls": {"mode": "SIMPLE"}}
    plan = plan_gateway(gateway(tls), [bound("checkout", ["*"], ["edge"])], addresses=ROUTERS)
    assert plan.routes == ()
    assert plan.unsupported[0].startswith("spec.servers[0]: HTTPS (TLS) is not served")


def test_a_bound_virtual_service_without_a_router_waits() -> None:
    plan = plan_gateway(
        gateway(http_server("*")), [bound("orders", ["*"], ["edge"])], addresses=ROUTERS
    )
    assert plan.routes == () and plan.waiting == ("shop/orders",)
