"""End to end: analysis queries written for Istio and for ingress-nginx find the local mesh's
traffic in a real Prometheus, unchanged.

The canary answers every `/` with 500 (ERROR_RATE=1), the stable never does, so the success
rates each query computes are known exactly: a success rate of 1 for the stable and an error
rate of 1 for the canary (a success rate of a canary with no success at all is an empty vector in
Prometheus, since the numerator has no series).
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import httpx2
import pytest

from cluster.local_mesh.harness import CANARY, STABLE, mesh_address, virtual_service, wait_realized
from cluster.local_mesh.harness import mesh_runtime as running
from cluster.local_runtime.harness import deployment, service
from headway.cluster.local.runtime import read_runtime_info
from prometheus_support import StartPrometheus

pytestmark = pytest.mark.slow

# The shape of Argo Rollouts' documented Istio success-rate template, with its args filled in.
ISTIO_RATE = """
sum(irate(istio_requests_total{{reporter="source",destination_service=~"{service}",
    response_code{codes}"5.*"}}[30s]))
/
sum(irate(istio_requests_total{{reporter="source",destination_service=~"{service}"}}[30s]))
"""
# The shape of its NGINX template: requests through the Ingress, split by who answered.
NGINX_RATE = """
sum(rate(nginx_ingress_controller_requests{{ingress="{ingress}",canary{canary},
    status{codes}"[4-5].*"}}[30s]))
/
sum(rate(nginx_ingress_controller_requests{{ingress="{ingress}",canary{canary}}}[30s]))
"""
ISTIO_P95_MS = """
histogram_quantile(0.95, sum(irate(istio_request_duration_milliseconds_bucket{{
    reporter="source",destination_workload="{workload}"}}[30s])) by (le))
"""


async def keep_sending(address: str, stop: asyncio.Event) -> None:
    async with httpx2.AsyncClient(base_url=f"http://{address}", timeout=5) as client:
        while not stop.is_set():
            with contextlib.suppress(httpx2.HTTPError):
                await client.get("/")
            await asyncio.sleep(0.02)


async def test_istio_and_nginx_templates_find_the_mesh_traffic(
    tmp_path: Path, prometheus: StartPrometheus
) -> None:
    async with running(tmp_path) as runtime:
        canary = deployment(CANARY, "headway-demo/app:v2", replicas=1)
        canary["spec"]["template"]["spec"]["containers"][0]["env"] = [
            {"name": "ERROR_RATE", "value": "1"}
        ]
        for obj in (deployment(STABLE, "headway-demo/app:v1", replicas=1), canary,
                    service(STABLE), service(CANARY), virtual_service(50, 50)):
            runtime.cluster.apply(obj, field_manager="test")
        await wait_realized(runtime, 50)
        host, _, port = read_runtime_info(runtime.paths)["metricsAddress"].partition(":")
        server = prometheus([(host, int(port))])
        stop = asyncio.Event()
        traffic = asyncio.create_task(keep_sending(mesh_address(runtime), stop))
        try:
            for service_name, codes in ((STABLE, "!~"), (CANARY, "=~")):
                fqdn = f"{service_name}.default.svc.cluster.local"
                await server.wait_for(ISTIO_RATE.format(service=fqdn, codes=codes),
                                      lambda v: v == [1.0])
            for canary, codes in (('=""', "!~"), ('!=""', "=~")):
                await server.wait_for(
                    NGINX_RATE.format(ingress="checkout", canary=canary, codes=codes),
                    lambda v: v == [1.0],
                )
            # Latency by workload: a finite quantile means the histogram is there and non-empty.
            await server.wait_for(ISTIO_P95_MS.format(workload=CANARY),
                                  lambda v: len(v) == 1 and 0 < v[0] < 10_000)
        finally:
            stop.set()
            await traffic
