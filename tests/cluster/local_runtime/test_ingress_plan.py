"""Ingress host and path matching, purely computed (Kubernetes' rules)."""

from __future__ import annotations

from headway.cluster.local.services.ingress_plan import Backend, choose_backend, ingress_routes

INGRESS = {
    "spec": {
        "defaultBackend": {"service": {"name": "fallback", "port": {"number": 80}}},
        "rules": [
            {"host": "shop.test", "http": {"paths": [
                {"path": "/", "pathType": "Prefix",
                 "backend": {"service": {"name": "web", "port": {"number": 80}}}},
                {"path": "/api", "pathType": "Prefix",
                 "backend": {"service": {"name": "api", "port": {"name": "http"}}}},
                {"path": "/api/health", "pathType": "Exact",
                 "backend": {"service": {"name": "health", "port": {"number": 8080}}}},
            ]}},
            {"host": "*.shop.test", "http": {"paths": [
                {"path": "/", "pathType": "Prefix",
                 "backend": {"service": {"name": "tenant", "port": {"number": 80}}}}]}},
            {"http": {"paths": [
                {"path": "/status", "pathType": "Exact",
                 "backend": {"service": {"name": "status", "port": {"number": 80}}}}]}},
        ],
    }
}


def chosen(host: str, path: str) -> str | None:
    routes, default = ingress_routes(INGRESS)
    backend = choose_backend(routes, default, host=host, path=path)
    return backend.service if backend else None


def test_longest_prefix_by_path_elements_and_exact() -> None:
    assert chosen("shop.test", "/api/v1/items") == "api"
    assert chosen("shop.test", "/api") == "api"
    assert chosen("shop.test", "/apis") == "web"  # not a path element of /api
    assert chosen("shop.test", "/api/health") == "health"
    assert chosen("shop.test", "/api/health/x") == "api"  # Exact does not prefix
    assert chosen("SHOP.test:8080", "/?q=1") == "web"


def test_wildcard_hosts_match_one_label_and_no_host_matches_all() -> None:
    assert chosen("a.shop.test", "/") == "tenant"
    assert chosen("a.b.shop.test", "/") == "fallback"
    assert chosen("elsewhere", "/status") == "status"
    assert chosen("elsewhere", "/other") == "fallback"


def test_port_by_name_and_no_default() -> None:
    routes, _ = ingress_routes(INGRESS)
    assert choose_backend(routes, None, host="shop.test", path="/api") == Backend("api", "http")
    assert choose_backend(routes, None, host="nowhere", path="/x") is None
