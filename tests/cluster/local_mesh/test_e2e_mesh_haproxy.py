"""The local mesh with `router: haproxy`: a real HAProxy per VirtualService, and a clear
error where HAProxy is not installed."""

from __future__ import annotations

from pathlib import Path

import httpx2
import pytest
from prometheus_client.parser import text_string_to_metric_families
from typer.testing import CliRunner

from cluster.local_mesh.harness import (
    CANARY,
    deploy_two_versions,
    get_vs,
    mesh_address,
    pod_hash,
    versions,
    virtual_service,
    wait_realized,
)
from cluster.local_mesh.harness import mesh_runtime as running
from cluster.local_mesh.test_e2e_mesh import istio
from conftest import require_program
from headway.cli.runtime import runtime_app
from headway.cluster.local.kubelet.images import RuntimeConfigError, load_runtime_config
from headway.cluster.local.kubelet.network import free_port
from headway.cluster.local.kubelet.processes import process_alive
from headway.cluster.local.runtime import read_runtime_info
from headway.local_mesh.planes import RouterPlane, RouterPlanes, haproxy_dir
from headway.rollout.plan import HeaderRoute
from headway.routers.dataplane.haproxy.router import HAProxyRouter
from polling import eventually

pytestmark = pytest.mark.slow


def haproxy_pids(state_dir: Path) -> list[int]:
    pid_file = haproxy_dir(state_dir / "mesh" / "default" / "checkout") / "haproxy.pid"
    return [int(pid_file.read_text())] if pid_file.exists() else []


@pytest.mark.haproxy
async def test_haproxy_realizes_weights_and_header_routes(tmp_path: Path) -> None:
    binary = require_program("haproxy")
    planes = RouterPlanes(haproxy_binary=binary)
    async with running(tmp_path, router="haproxy", planes=planes) as runtime:
        deploy_two_versions(runtime)
        runtime.cluster.apply(virtual_service(90, 10), field_manager="argocd-controller")
        status = await wait_realized(runtime, 10)
        assert status["router"] == "haproxy"
        address = mesh_address(runtime)
        pids = haproxy_pids(tmp_path)
        assert len(pids) == 1

        # HAProxy's weighted round-robin is exact over its own cycle, which need not start
        # with our first request: allow one request of phase difference per hundred.
        first = await versions(address, 100)
        assert first.total() == 100 and abs(first["200 v2"] - 10) <= 1, first
        istio(runtime.cluster).set_weight(40)
        await wait_realized(runtime, 40)
        assert haproxy_pids(tmp_path) == pids, "a weight change must not restart haproxy"
        second = await versions(address, 100)
        assert second.total() == 100 and abs(second["200 v2"] - 40) <= 1, second

        istio(runtime.cluster).set_header_route(
            HeaderRoute("canary-header", ({"headerName": "x-canary",
                                           "headerValue": {"exact": "always"}},))
        )
        istio(runtime.cluster).set_weight(0)
        await wait_realized(runtime, 0)
        await eventually(lambda: get_vs(runtime)["status"].get("headerRoutes"), what="route")
        assert await versions(address, 10, {"x-canary": "always"}) == {"200 v2": 10}
        assert await versions(address, 10) == {"200 v1": 10}

        metrics = read_runtime_info(runtime.paths)["metricsAddress"]
        async with httpx2.AsyncClient(timeout=5) as client:
            text = (await client.get(f"http://{metrics}/metrics")).text
        canary_hash = pod_hash(runtime, CANARY)
        canary = sum(
            s.value
            for f in text_string_to_metric_families(text)
            for s in f.samples
            if s.name == "headway_requests_total"
            and s.labels["rollouts_pod_template_hash"] == canary_hash
            and s.labels["service"] == CANARY
            and s.labels["code"] == "2xx"  # HAProxy counts status classes
        )
        assert canary == first["200 v2"] + second["200 v2"] + 10

        # A header HAProxy was not started with: it restarts once, on the same address.
        user = {"name": "beta", "match": [{"headers": {"x-user": {"prefix": "beta"}}}],
                "route": [{"destination": {"host": CANARY}}]}
        body = virtual_service(100, 0)
        body["spec"]["http"].insert(0, user)
        runtime.cluster.apply(body, field_manager="argocd-controller", force=True)
        await eventually(lambda: [r["name"] for r in get_vs(runtime)["status"]["headerRoutes"]]
                         == ["beta"], what="the x-user route")
        assert mesh_address(runtime) == address
        restarted = haproxy_pids(tmp_path)
        assert len(restarted) == 1 and restarted != pids
        assert await versions(address, 4, {"x-user": "beta-7"}) == {"200 v2": 4}
        assert await versions(address, 4, {"x-canary": "always"}) == {"200 v1": 4}
        pids += restarted
    assert all(not Path(f"/proc/{pid}").exists() for pid in pids)


async def test_haproxy_missing_is_a_clear_error_on_the_virtual_service(tmp_path: Path) -> None:
    planes = RouterPlanes(haproxy_binary=str(tmp_path / "no-haproxy-here"))
    async with running(tmp_path, router="haproxy", planes=planes) as runtime:
        runtime.cluster.apply(virtual_service(90, 10), field_manager="argocd-controller")
        condition = await eventually(
            lambda: (get_vs(runtime).get("status") or {}).get("conditions"), what="a condition"
        )
    assert condition[0]["status"] == "False"
    assert condition[0]["reason"] == "RouterUnavailable"
    assert "`router: haproxy`, but no haproxy executable was found" in condition[0]["message"]


def test_an_unknown_router_in_the_config_names_file_line_and_field(tmp_path: Path) -> None:
    config = tmp_path / "headway-runtime.yaml"
    config.write_text("images: {}\nrouter: envoy\n")
    with pytest.raises(RuntimeConfigError, match=r"headway-runtime\.yaml:2.*router.*embedded"):
        load_runtime_config(config)
    config.write_text("router: haproxy\n")
    assert load_runtime_config(config).router == "haproxy"
    config.write_text("images: {}\n")
    assert load_runtime_config(config).router == "embedded"


@pytest.mark.haproxy
async def test_a_haproxy_left_by_a_killed_runtime_is_stopped(tmp_path: Path) -> None:
    """A killed daemon's HAProxy outlives it; the next runtime, and `runtime down`, stop it."""
    planes = RouterPlanes(haproxy_binary=require_program("haproxy"))

    async def orphan(name: str) -> tuple[RouterPlane, int]:
        plane = planes.create(router="haproxy", port=free_port(), labels={"virtualservice": name},
                              work_dir=tmp_path / "mesh" / "default" / name)
        assert isinstance(plane, RouterPlane)
        await plane.start()
        impl = plane.router_impl
        assert isinstance(impl, HAProxyRouter) and impl.pid is not None
        return plane, impl.pid

    first, first_pid = await orphan("left-before-up")
    async with running(tmp_path, router="haproxy", planes=planes):
        await eventually(lambda: not process_alive(first_pid), what="the leftover to stop")
    second, second_pid = await orphan("left-before-down")
    assert process_alive(second_pid)
    down = CliRunner().invoke(runtime_app, ["down", "--state-dir", str(tmp_path)])
    assert down.exit_code == 0, down.output
    assert "killed 1 leftover process(es)" in down.output
    assert not process_alive(second_pid)
    for plane in (first, second):
        await plane.close()  # reaps the zombies this test process is the parent of
