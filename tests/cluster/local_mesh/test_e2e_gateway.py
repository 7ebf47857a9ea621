"""End to end: an Istio Gateway in front of a VirtualService, on the local mesh. Requests
sent to the Gateway's listener with the VirtualService's host reach the real Pods, split as
the VirtualService says; other hosts get Istio's 404."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import httpx2
import pytest

from cluster.local_mesh.harness import deploy_two_versions, virtual_service, wait_realized
from cluster.local_mesh.harness import mesh_runtime as running
from headway.cluster.local.mesh.gateways import GATEWAY_API
from polling import eventually

pytestmark = pytest.mark.slow

GATEWAY = {
    "apiVersion": GATEWAY_API,
    "kind": "Gateway",
    "metadata": {"name": "edge", "namespace": "default"},
    "spec": {
        "selector": {"istio": "ingressgateway"},
        "servers": [{"port": {"number": 80, "name": "http", "protocol": "HTTP"},
                     "hosts": ["*.shop.example"]}],
    },
}


def bound_to_the_gateway(stable: int, canary: int) -> dict[str, Any]:
    vs = virtual_service(stable, canary)
    vs["spec"]["hosts"] = ["checkout.shop.example"]
    vs["spec"]["gateways"] = ["edge"]
    return vs


def routed(runtime: Any) -> Any:
    """The Gateway's status once it routes the checkout host, else None."""
    gateway = runtime.cluster.get(GATEWAY_API, "Gateway", "edge", "default")
    status = gateway.get("status") or {}
    routes = [r for r in status.get("routes") or [] if r["virtualService"] == "default/checkout"]
    return status if routes else None


async def test_requests_through_the_gateway_reach_the_virtual_service(tmp_path: Path) -> None:
    async with running(tmp_path) as runtime:
        deploy_two_versions(runtime)
        runtime.cluster.apply(GATEWAY, field_manager="argocd-controller")
        runtime.cluster.apply(bound_to_the_gateway(75, 25), field_manager="argocd-controller")
        await wait_realized(runtime, 25)
        status = await eventually(lambda: routed(runtime), timeout=20, what="gateway routes")
        address = status["address"]
        seen: Counter[str] = Counter()
        async with httpx2.AsyncClient(base_url=f"http://{address}", timeout=5) as client:
            for _ in range(100):
                response = await client.get("/", headers={"host": "checkout.shop.example"})
                seen[f"{response.status_code} {response.text.split()[0]}"] += 1
            other = await client.get("/", headers={"host": "search.shop.example"})
    assert seen == {"200 v1": 75, "200 v2": 25}
    assert other.status_code == 404
    assert "no VirtualService bound to gateway default/edge serves host" in other.text
    assert status["routes"][0]["host"] == "checkout.shop.example"
    assert status["conditions"][0]["reason"] == "Realized"
