"""End to end: an Ingress routes real requests by host and path to real Services."""

from __future__ import annotations

from pathlib import Path

import httpx2
import pytest

from cluster.local_runtime.harness import deployment, running_runtime, service
from headway.cluster.local.runtime import Runtime
from headway.health import assess
from headway.health.status import HealthStatus
from headway.model.obj import Obj
from polling import eventually, eventually_async

pytestmark = pytest.mark.slow

INGRESS: Obj = {
    "apiVersion": "networking.k8s.io/v1",
    "kind": "Ingress",
    "metadata": {"name": "shop", "namespace": "default"},
    "spec": {"rules": [
        {"host": "shop.test", "http": {"paths": [
            {"path": "/", "pathType": "Prefix",
             "backend": {"service": {"name": "front", "port": {"number": 80}}}},
            {"path": "/gone", "pathType": "Prefix",
             "backend": {"service": {"name": "missing", "port": {"number": 80}}}}]}},
        {"host": "*.shop.test", "http": {"paths": [
            {"path": "/", "pathType": "Prefix",
             "backend": {"service": {"name": "back", "port": {"number": 80}}}}]}}]},
}


def address(runtime: Runtime) -> str | None:
    ingress = runtime.cluster.get("networking.k8s.io/v1", "Ingress", "shop", "default")
    found = ((ingress.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
    return f"http://127.0.0.1:{found[0]['ports'][0]['port']}" if found else None


async def test_host_and_path_rules_reach_their_services(tmp_path: Path) -> None:
    async with running_runtime(tmp_path) as runtime:
        for name, tag in (("front", "v1"), ("back", "v2")):
            runtime.cluster.apply(deployment(name, f"headway-demo/app:{tag}", replicas=1),
                                  field_manager="test")
            runtime.cluster.apply(service(name), field_manager="test")
        runtime.cluster.apply(INGRESS, field_manager="test")
        base = await eventually(lambda: address(runtime), what="the Ingress's address")
        live = runtime.cluster.get("networking.k8s.io/v1", "Ingress", "shop", "default")
        assert assess(live).status is HealthStatus.HEALTHY

        async def answer(path: str, host: str = "shop.test") -> tuple[int, str]:
            async with httpx2.AsyncClient(timeout=5) as client:
                response = await client.get(base + path, headers={"Host": host})
                return response.status_code, response.text

        async def version(host: str) -> str | None:
            try:
                code, body = await answer("/", host=host)
            except httpx2.TransportError:  # the Service has no ready Pod yet: it hangs up
                return None
            return body.split()[0] if code == 200 else None  # the app says "<version> <pod>"

        assert await eventually_async(lambda: version("shop.test"), what="front") == "v1"
        assert await eventually_async(lambda: version("api.shop.test"), what="back") == "v2"
        assert (await answer("/", host="other.test"))[0] == 404
        code, text = await answer("/gone")
        assert code == 503 and "Service missing not found" in text
