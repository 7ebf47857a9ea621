"""End to end: a VirtualService written for Istio splits real traffic between real processes.

The weights and header routes are edited the way the Rollout controller edits them, through
`IstioReconciler`; the runtime's mesh must follow without dropping a request.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from pathlib import Path
from typing import Any

import httpx2
import pytest
import typer
from prometheus_client.parser import text_string_to_metric_families
from typer.testing import CliRunner

from cluster.local_mesh.harness import (
    CANARY,
    STABLE,
    deploy_two_versions,
    get_vs,
    mesh_address,
    pod_hash,
    versions,
    virtual_service,
    wait_realized,
)
from cluster.local_mesh.harness import mesh_runtime as running
from headway.cli import objects as objects_cli
from headway.cli import runtime as runtime_cli
from headway.cluster.local.kubelet.processes import find_marked_processes
from headway.cluster.local.runtime import read_runtime_info
from headway.cluster.protocol import Cluster
from headway.rollout.plan import HeaderRoute
from headway.routers.control.istio import IstioReconciler
from polling import eventually, eventually_async

pytestmark = pytest.mark.slow

app = typer.Typer()
objects_cli.register(app)
runtime_cli.register(app)


def istio(cluster: Cluster) -> IstioReconciler:
    """The Rollout controller's editor of the VirtualService, as it is used for a Rollout."""
    return IstioReconciler(
        cluster,
        namespace="default",
        virtual_services=[{"name": "checkout", "routes": ["primary"]}],
        stable_service=STABLE,
        canary_service=CANARY,
        managed_routes=["canary-header"],
    )


def requests_total(text: str) -> dict[tuple[str, str, str, str], float]:
    """(virtualservice, service, hash, code) -> count, from the runtime's /metrics."""
    found: dict[tuple[str, str, str, str], float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "headway_requests_total":
                labels = sample.labels
                key = (labels["virtualservice"], labels["service"],
                       labels["rollouts_pod_template_hash"], labels["code"])
                found[key] = found.get(key, 0.0) + sample.value
    return found


async def load(address: str, stop: asyncio.Event, codes: list[int]) -> None:
    async with httpx2.AsyncClient(base_url=f"http://{address}", timeout=5) as client:
        for _ in range(5000):  # bounded
            if stop.is_set():
                return
            try:
                codes.append((await client.get("/")).status_code)
            except httpx2.HTTPError:
                codes.append(0)


async def sent_more(codes: list[int], count: int, *, what: str) -> None:
    """Until the load has sent `count` more requests than it had when called."""
    target = len(codes) + count
    await eventually(lambda: len(codes) >= target, timeout=30, what=f"{count} more {what}")


async def test_split_follows_the_virtual_service_exactly(tmp_path: Path) -> None:
    async with running(tmp_path) as runtime:
        deploy_two_versions(runtime)
        runtime.cluster.apply(virtual_service(90, 10), field_manager="argocd-controller")
        await wait_realized(runtime, 10)
        address = mesh_address(runtime)

        assert await versions(address, 100) == {"200 v1": 90, "200 v2": 10}

        codes: list[int] = []
        stop = asyncio.Event()
        background = asyncio.create_task(load(address, stop, codes))
        for weight in (50, 0, 100, 25):
            istio(runtime.cluster).set_weight(weight)
            await wait_realized(runtime, weight)
            # The load spans every change: it keeps going until it has sent some requests at
            # this weight, however slowly a loaded machine lets it run.
            await sent_more(codes, 10, what=f"requests at weight {weight}")
        stop.set()
        await background
        assert set(codes) == {200}, "weight changes dropped requests"
        assert await versions(address, 100) == {"200 v1": 75, "200 v2": 25}

        istio(runtime.cluster).set_header_route(
            HeaderRoute("canary-header", ({"headerName": "x-canary",
                                           "headerValue": {"exact": "always"}},))
        )
        await eventually(lambda: get_vs(runtime)["status"].get("headerRoutes"), what="route")
        assert await versions(address, 20, {"x-canary": "always"}) == {"200 v2": 20}
        assert await versions(address, 4, {"x-canary": "sometimes"}) == {"200 v1": 3, "200 v2": 1}

        metrics = read_runtime_info(runtime.paths)["metricsAddress"]
        async with httpx2.AsyncClient(timeout=5) as client:
            text = (await client.get(f"http://{metrics}/metrics")).text
        totals = requests_total(text)
        canary = ("checkout", CANARY, pod_hash(runtime, CANARY), "200")
        stable = ("checkout", STABLE, pod_hash(runtime, STABLE), "200")
        during_load = codes.count(200)
        assert totals[canary] + totals[stable] == 100 + during_load + 100 + 24
        assert totals[canary] >= 10 + 25 + 20 + 1


async def test_describe_get_and_status_show_the_router(tmp_path: Path) -> None:
    async with running(tmp_path) as runtime:
        deploy_two_versions(runtime)
        runtime.cluster.apply(virtual_service(80, 20), field_manager="argocd-controller")
        await wait_realized(runtime, 20)
        address = mesh_address(runtime)
        cli = CliRunner()
        state = ["--state-dir", str(tmp_path)]
        got = cli.invoke(app, ["get", "vs", *state])
        described = cli.invoke(app, ["describe", "virtualservice", "checkout", *state])
        status = cli.invoke(app, ["runtime", "status", *state])
    assert got.exit_code == 0, got.output
    assert f"embedded   {address}   {STABLE}=80,{CANARY}=20" in got.output
    assert described.exit_code == 0, described.output
    assert "reason: Realized" not in described.output  # conditions are a table
    assert "Ready           True   Realized" in described.output
    for line in (f"address: {address}", "router: embedded", f"service: {CANARY}",
                 "weight: 20", "podTemplateHash:"):
        assert line in described.output
    assert "TrafficSplit" in described.output
    metrics = read_runtime_info(runtime.paths)["metricsAddress"]
    assert f"metrics: http://{metrics}/metrics" in status.output
    assert f"virtualservice default/checkout: {address}" in status.output


async def serving(address: str, answer: str) -> None:
    """Wait until the router at `address` answers like `answer` (the pods restart too)."""

    async def answers() -> bool:
        with contextlib.suppress(httpx2.HTTPError):
            return await versions(address, 1) == {answer: 1}
        return False

    await eventually_async(answers, what=f"{address} to answer {answer!r}")


def refused(address: str) -> bool:
    host, port = address.split(":")
    with socket.socket() as probe:
        return probe.connect_ex((host, int(port))) != 0


async def test_addresses_survive_a_restart_and_nothing_is_left_behind(tmp_path: Path) -> None:
    async with running(tmp_path) as runtime:
        deploy_two_versions(runtime)
        runtime.cluster.apply(virtual_service(0, 100), field_manager="argocd-controller")
        await wait_realized(runtime, 100)
        first = (mesh_address(runtime), read_runtime_info(runtime.paths)["metricsAddress"])
        first_id = runtime.runtime_id
    assert find_marked_processes(first_id) == []
    assert refused(first[0]) and refused(str(first[1]))

    async with running(tmp_path) as runtime:
        await serving(first[0], "200 v2")
        again = (mesh_address(runtime), read_runtime_info(runtime.paths)["metricsAddress"])
        assert again == first
        assert await versions(first[0], 3) == {"200 v2": 3}
        runtime.cluster.delete("networking.istio.io/v1beta1", "VirtualService", "checkout",
                               "default")
        await eventually(lambda: refused(first[0]), what="the router to close")
    assert refused(str(first[1]))


def with_routes(body: dict[str, Any], *routes: dict[str, Any]) -> dict[str, Any]:
    body["spec"]["http"] = [*routes, *body["spec"]["http"]]
    return body


async def test_bad_edits_keep_the_last_good_split_and_say_why(tmp_path: Path) -> None:
    async with running(tmp_path) as runtime:
        deploy_two_versions(runtime)
        runtime.cluster.apply(virtual_service(100, 0), field_manager="argocd-controller")
        await wait_realized(runtime, 0)
        address = mesh_address(runtime)

        broken = virtual_service(50, 50)
        broken["spec"]["http"][0]["route"][1]["destination"]["subset"] = ""
        runtime.cluster.apply(broken, field_manager="argocd-controller")
        condition = await eventually(
            lambda: next((c for c in get_vs(runtime)["status"]["conditions"]
                          if c["status"] == "False"), None),
            what="Ready=False",
        )
        assert condition["reason"] == "InvalidSpec"
        assert condition["message"].startswith("spec.http[0].route[1].destination.subset:")
        assert await versions(address, 10) == {"200 v1": 10}, "the last good split stays"

        beta = {"name": "beta", "match": [{"headers": {"x-user": {"regex": "beta-[0-9]+"}}}],
                "route": [{"destination": {"host": CANARY}}]}
        uri = {"name": "api", "match": [{"uri": {"prefix": "/api"}}],
               "route": [{"destination": {"host": CANARY}}]}
        runtime.cluster.apply(with_routes(virtual_service(100, 0), beta, uri),
                              field_manager="argocd-controller")
        status = await wait_realized(runtime, 0)
        assert status["conditions"][0]["reason"] == "PartiallyRealized"
        assert status["unsupported"] == [
            "spec.http[1].match[0]: matching on uri is not implemented"]
        assert await versions(address, 3, {"x-user": "beta-42"}) == {"200 v2": 3}
        # Istio's regex matches the whole value: a mere substring match is not enough.
        assert await versions(address, 3, {"x-user": "xbeta-42"}) == {"200 v1": 3}
        assert await versions(address, 3, {"x-user": "beta-42x"}) == {"200 v1": 3}
