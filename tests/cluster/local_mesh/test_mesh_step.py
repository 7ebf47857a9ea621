"""The mesh step against a real store, with a recording data plane: addresses, status writes,
Events, restarts and isolation of failures — no sockets needed."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from headway.clock import VirtualClock
from headway.cluster.events import events_for
from headway.cluster.local.api.store import LocalCluster
from headway.cluster.local.mesh.gateway_plan import GatewayRoute
from headway.cluster.local.mesh.gateways import GATEWAY_API
from headway.cluster.local.mesh.plane import PlaneConfig
from headway.cluster.local.mesh.virtual_services import (
    ADDRESS_ANNOTATION,
    VIRTUAL_SERVICE_API,
    Mesh,
)
from headway.model.obj import Obj


class FakePlane:
    def __init__(self, owner: FakePlanes, router: str, port: int, name: str) -> None:
        self.owner, self.router, self.port, self.name = owner, router, port, name
        self.configs: list[PlaneConfig] = []

    @property
    def type_name(self) -> str:
        return self.router

    @property
    def address(self) -> tuple[str, int]:
        return "127.0.0.1", self.port

    async def start(self) -> None:
        if self.port in self.owner.taken:
            raise OSError(f"port {self.port} in use")
        self.owner.log.append(("start", self.name, self.router, self.port))

    async def close(self) -> None:
        self.owner.log.append(("close", self.name, self.router, self.port))

    async def configure(self, config: PlaneConfig) -> None:
        if self.name in self.owner.broken:
            raise ValueError("the plane is broken")
        self.configs.append(config)
        self.owner.last[self.name] = config


class FakeGateway:
    def __init__(self, owner: FakePlanes, port: int, name: str) -> None:
        self.owner, self.port, self.name = owner, port, name

    @property
    def address(self) -> tuple[str, int]:
        return "127.0.0.1", self.port

    async def start(self) -> None:
        self.owner.log.append(("start", self.name, "gateway", self.port))

    async def close(self) -> None:
        self.owner.log.append(("close", self.name, "gateway", self.port))

    async def configure(self, routes: tuple[GatewayRoute, ...]) -> None:
        self.owner.gateway_routes[self.name] = routes


class FakePlanes:
    def __init__(self) -> None:
        self.gateway_routes: dict[str, tuple[GatewayRoute, ...]] = {}
        self.log: list[tuple[str, str, str, int]] = []
        self.taken: set[int] = set()
        self.broken: set[str] = set()
        self.last: dict[str, PlaneConfig] = {}
        self.metrics_ports: list[int] = []
        self.next_port = 41000

    def unavailable(self, router: str) -> str:
        return "" if router in ("embedded", "haproxy") else f"no {router}"

    def create(
        self, *, router: str, port: int, work_dir: Path, labels: Mapping[str, str]
    ) -> FakePlane:
        return FakePlane(self, router, port, labels["virtualservice"])

    def create_gateway(self, *, port: int, name: str) -> FakeGateway:
        return FakeGateway(self, port, name)

    async def start_metrics(self, port: int) -> tuple[str, int]:
        self.metrics_ports.append(port)
        return "127.0.0.1", port or 49999

    async def close_metrics(self) -> None:
        pass

    def stop_leftovers(self, work_dir: Path) -> list[int]:
        return []


def vs(name: str, *, annotations: dict[str, str] | None = None) -> Obj:
    meta: dict[str, Any] = {"name": name, "namespace": "default"}
    if annotations:
        meta["annotations"] = annotations
    return {
        "apiVersion": VIRTUAL_SERVICE_API,
        "kind": "VirtualService",
        "metadata": meta,
        "spec": {"http": [{"route": [{"destination": {"host": "a"}, "weight": 70},
                                     {"destination": {"host": "b"}, "weight": 30}]}]},
    }


@pytest.fixture
def cluster(tmp_path: Path, clock: VirtualClock) -> LocalCluster:
    return LocalCluster(tmp_path / "cluster.db", clock)


def mesh(cluster: LocalCluster, planes: FakePlanes, tmp_path: Path, router: list[str]) -> Mesh:
    return Mesh(cluster, clock=VirtualClock(), planes=planes, work_dir=tmp_path / "mesh",
                router=lambda: router[0])


def get(cluster: LocalCluster, name: str) -> Obj:
    return cluster.get(VIRTUAL_SERVICE_API, "VirtualService", name, "default")


def reasons(cluster: LocalCluster, name: str) -> list[str]:
    return [e["reason"] for e in events_for(cluster, get(cluster, name))]


async def test_address_status_and_event_are_written_once(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    planes, router = FakePlanes(), ["embedded"]
    cluster.apply(vs("web"), field_manager="git")
    step = mesh(cluster, planes, tmp_path, router)
    await step.sync()
    live = get(cluster, "web")
    (start,) = planes.log
    assert live["metadata"]["annotations"][ADDRESS_ANNOTATION] == f"127.0.0.1:{start[3]}"
    assert live["status"]["conditions"][0]["reason"] == "Realized"
    assert "missingServices" in live["status"]  # Services a and b do not exist
    assert reasons(cluster, "web") == ["TrafficSplit"]
    assert (planes.last["web"].stable.service, planes.last["web"].canary_weight) == ("a", 30)
    revision = cluster.revision()
    await step.sync()
    await step.sync()
    assert cluster.revision() == revision, "an unchanged world must not be written again"
    assert step.metrics_address == "127.0.0.1:49999"


async def test_a_new_mesh_reuses_the_addresses(cluster: LocalCluster, tmp_path: Path) -> None:
    planes = FakePlanes()
    cluster.apply(vs("web"), field_manager="git")
    first = mesh(cluster, planes, tmp_path, ["embedded"])
    await first.sync()
    await first.close()
    second = mesh(cluster, planes, tmp_path, ["embedded"])
    await second.sync()
    starts = [entry for entry in planes.log if entry[0] == "start"]
    assert starts[0][3] == starts[1][3]
    assert planes.metrics_ports == [0, 49999]


async def test_a_taken_port_moves_the_router_and_says_so(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    planes = FakePlanes()
    planes.taken.add(40123)
    cluster.apply(vs("web", annotations={ADDRESS_ANNOTATION: "127.0.0.1:40123"}),
                  field_manager="git")
    await mesh(cluster, planes, tmp_path, ["embedded"]).sync()
    address = get(cluster, "web")["metadata"]["annotations"][ADDRESS_ANNOTATION]
    assert address != "127.0.0.1:40123" and address == f"127.0.0.1:{planes.log[0][3]}"
    assert "AddressChanged" in reasons(cluster, "web")


async def test_changing_the_router_restarts_on_the_same_port_and_deletion_closes(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    planes, router = FakePlanes(), ["embedded"]
    cluster.apply(vs("web"), field_manager="git")
    step = mesh(cluster, planes, tmp_path, router)
    await step.sync()
    router[0] = "haproxy"
    await step.sync()
    port = planes.log[0][3]
    assert planes.log == [("start", "web", "embedded", port), ("close", "web", "embedded", port),
                          ("start", "web", "haproxy", port)]
    assert get(cluster, "web")["status"]["router"] == "haproxy"
    router[0] = "envoy"
    await step.sync()
    condition = get(cluster, "web")["status"]["conditions"][0]
    assert (condition["status"], condition["reason"]) == ("False", "RouterUnavailable")
    cluster.delete(VIRTUAL_SERVICE_API, "VirtualService", "web", "default")
    await step.sync()
    assert planes.log[-1] == ("close", "web", "haproxy", port)


async def test_one_broken_virtual_service_does_not_stop_the_others(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    planes = FakePlanes()
    planes.broken.add("bad")
    cluster.apply(vs("bad"), field_manager="git")
    cluster.apply(vs("good"), field_manager="git")
    await mesh(cluster, planes, tmp_path, ["embedded"]).sync()
    assert "good" in planes.last
    assert get(cluster, "good")["status"]["conditions"][0]["status"] == "True"
    assert reasons(cluster, "bad") == ["MeshError"]
    condition = get(cluster, "bad")["status"]["conditions"][0]
    assert (condition["status"], condition["message"]) == (
        "False", "ValueError: the plane is broken")


async def test_a_gateway_routes_to_the_routers_bound_to_it_and_closes_when_deleted(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    planes = FakePlanes()
    web = vs("web")
    web["spec"].update(hosts=["web.example"], gateways=["edge"])
    cluster.apply(web, field_manager="git")
    server = {"port": {"number": 443, "protocol": "HTTPS"}, "hosts": ["*"], "tls": {}}
    edge = {
        "apiVersion": GATEWAY_API,
        "kind": "Gateway",
        "metadata": {"name": "edge", "namespace": "default"},
        "spec": {"servers": [{"port": {"number": 80, "protocol": "HTTP"}, "hosts": ["*"]},
                             server]},
    }
    cluster.apply(edge, field_manager="git")
    step = mesh(cluster, planes, tmp_path, ["embedded"])
    await step.sync()
    router_port = next(e[3] for e in planes.log if e[1] == "web")
    (route,) = planes.gateway_routes["default/edge"]
    assert (route.pattern, route.port) == ("web.example", router_port)
    live = cluster.get(GATEWAY_API, "Gateway", "edge", "default")
    gateway_port = next(e[3] for e in planes.log if e[2] == "gateway")
    assert live["metadata"]["annotations"][ADDRESS_ANNOTATION] == f"127.0.0.1:{gateway_port}"
    assert live["status"]["conditions"][0]["reason"] == "PartiallyRealized"
    assert live["status"]["unsupported"][0].startswith("spec.servers[1]: HTTPS (TLS)")
    cluster.delete(GATEWAY_API, "Gateway", "edge", "default")
    await step.sync()
    assert planes.log[-1] == ("close", "default/edge", "gateway", gateway_port)
