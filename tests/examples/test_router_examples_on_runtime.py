"""The `argo_rollouts/ambassador` and `argo_rollouts/apisix` fixtures (argo-rollouts'
examples/ambassador and examples/apisix) on the local runtime, applied unchanged with an image
map as the only addition (and the routers' CRDs, which their controllers install on a real
cluster). A new image routes real traffic through the local mesh as each router's objects say:
Ambassador's canary Mapping takes 30 % (the Rollout is paused there by hand, as an operator
would, so the timed pause does not move on while requests are counted); APISIX's managed
route sends `trace: debug` to the one canary pod while everything else stays on stable. An
abort puts every request back on the stable version and removes what the Rollout wrote."""

from __future__ import annotations

import asyncio
import sys
from collections import Counter
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
import yaml

from headway.clock import SystemClock
from headway.cluster.errors import NotFound
from headway.cluster.local.runtime import Runtime
from headway.engine import Engine, EngineSettings, Loop
from headway.local_mesh.planes import RouterPlanes
from headway.model.obj import Obj
from headway.steering import rollouts as rollouts_actions
from polling import eventually, eventually_async

pytestmark = pytest.mark.slow

API = "argoproj.io/v1alpha1"
HERE = Path(__file__).resolve().parent / "argo_rollouts"
APP = Path(__file__).resolve().parents[2] / "examples" / "app" / "server.py"


def _crd(group: str, kind: str, plural: str, version: str, scope: str = "Namespaced") -> Obj:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": scope,
            "names": {"kind": kind, "plural": plural},
            "versions": [{"name": version, "served": True, "storage": True}],
        },
    }


def _fixture(name: str) -> list[Obj]:
    docs: list[Obj] = []
    for path in sorted((HERE / name).glob("*.yaml")):
        docs.extend(d for d in yaml.safe_load_all(path.read_text()) if d)
    return docs


@asynccontextmanager
async def _runtime(tmp_path: Path, *objects: Obj) -> AsyncIterator[Runtime]:
    config = tmp_path / "headway-runtime.yaml"
    config.write_text(
        f'images:\n  "example/*":\n    command: [{sys.executable!r}, {str(APP)!r}]\n'
        "    versionFromTag: true\n"
    )
    clock = SystemClock()
    state = tmp_path / "state"
    runtime = Runtime(
        state_dir=state,
        clock=clock,
        config_path=config,
        shutdown_grace_seconds=2.0,
        data_planes=RouterPlanes(),
    )
    http = httpx2.AsyncClient()
    settings = EngineSettings(state_dir=state, loops=frozenset({Loop.ROLLOUTS}))
    engine = Engine(cluster=runtime.cluster, clock=clock, http=http, settings=settings)
    for obj in objects:
        runtime.cluster.apply(obj, field_manager="test")
    stop = asyncio.Event()
    tasks = [asyncio.create_task(runtime.run(stop)), asyncio.create_task(engine.run(stop))]
    try:
        yield runtime
    finally:
        stop.set()
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=30)
        await http.aclose()


def _status(runtime: Runtime, name: str, namespace: str = "default") -> dict[str, Any]:
    return dict(runtime.cluster.get(API, "Rollout", name, namespace).get("status") or {})


def _get(
    runtime: Runtime, api: str, kind: str, name: str, namespace: str = "default"
) -> Obj | None:
    try:
        return runtime.cluster.get(api, kind, name, namespace)
    except NotFound:
        return None


def _address(
    runtime: Runtime, api: str, kind: str, name: str, namespace: str = "default"
) -> str | None:
    obj = _get(runtime, api, kind, name, namespace) or {"metadata": {}}
    return (obj["metadata"].get("annotations") or {}).get("headway.dev/address")


async def _versions(
    address: str, count: int, headers: Mapping[str, str] | None = None
) -> Counter[str]:
    seen: Counter[str] = Counter()
    async with httpx2.AsyncClient(timeout=5) as client:
        for _ in range(count):
            response = await client.get(f"http://{address}/", headers=dict(headers or {}))
            seen[response.text.split()[0] if response.status_code == 200 else "error"] += 1
    return seen


async def _answers(
    address: str, expected: Counter[str], headers: Mapping[str, str] | None = None, what: str = ""
) -> None:
    count = sum(expected.values())

    async def seen() -> bool:
        return await _versions(address, count, headers) == expected

    await eventually_async(seen, timeout=30, what=what or f"{expected} answering")


async def _healthy_then_new_image(
    runtime: Runtime, rollout: str, container: str, image: str, namespace: str = "default"
) -> None:
    await eventually(
        lambda: _status(runtime, rollout, namespace).get("phase") == "Healthy",
        timeout=60,
        what="Healthy",
    )
    rollouts_actions.set_image(
        runtime.cluster, namespace, rollout, container=container, image=image
    )


async def test_the_ambassador_example_splits_through_its_canary_mapping(tmp_path: Path) -> None:
    mapping_api = "getambassador.io/v2"
    crds = [
        _crd("getambassador.io", "Mapping", "mappings", "v2"),
        _crd("getambassador.io", "KubernetesEndpointResolver", "kubernetesendpointresolvers", "v2"),
    ]
    async with _runtime(tmp_path, *crds, *_fixture("ambassador")) as runtime:
        await _healthy_then_new_image(runtime, "greeter", "greeter", "example/greeter:v2")

        def canary_weight() -> Any:
            canary = _get(runtime, mapping_api, "Mapping", "greeter-canary")
            return canary and canary["spec"].get("weight")

        await eventually(lambda: canary_weight() == 30, timeout=60, what="canary Mapping at 30")
        rollouts_actions.pause(runtime.cluster, "default", "greeter")
        address = await eventually(
            lambda: _address(runtime, mapping_api, "Mapping", "greeter"), timeout=20, what="address"
        )
        await _answers(address, Counter({"v1": 7, "v2": 3}), what="30 % on v2")
        assert canary_weight() == 30  # still there: the split counted was the paused step's

        rollouts_actions.abort(runtime.cluster, "default", "greeter")
        await eventually(lambda: canary_weight() is None, timeout=30, what="canary Mapping deleted")
        await _answers(address, Counter({"v1": 10}), what="every request on v1")


async def test_the_apisix_example_sends_the_debug_header_to_the_canary(tmp_path: Path) -> None:
    route_api = "apisix.apache.org/v2"
    crds = [_crd("apisix.apache.org", "ApisixRoute", "apisixroutes", "v2")]
    async with _runtime(tmp_path, *crds, *_fixture("apisix")) as runtime:
        await _healthy_then_new_image(
            runtime, "storefront", "storefront", "example/storefront:green"
        )
        await eventually(
            lambda: _status(runtime, "storefront").get("pauseConditions"),
            timeout=60,
            what="paused at step 2",
        )
        managed = _get(runtime, route_api, "ApisixRoute", "debug-header")
        assert managed is not None
        assert [b["serviceName"] for b in managed["spec"]["http"][0]["backends"]] == [
            "storefront-canary"
        ]
        address = await eventually(
            lambda: _address(runtime, route_api, "ApisixRoute", "storefront-route"),
            timeout=20,
            what="address",
        )
        await _answers(address, Counter({"green": 6}), {"trace": "debug"}, "header on the canary")
        assert await _versions(address, 10) == Counter({"blue": 10})

        rollouts_actions.abort(runtime.cluster, "default", "storefront")
        await eventually(
            lambda: _get(runtime, route_api, "ApisixRoute", "debug-header") is None,
            timeout=30,
            what="managed route deleted",
        )
        await _answers(address, Counter({"blue": 6}), {"trace": "debug"}, "header back on stable")


async def test_the_app_mesh_example_splits_through_its_virtual_router(tmp_path: Path) -> None:
    mesh_api, namespace = "appmesh.k8s.aws/v1beta2", "shop-mesh"
    crds = [
        _crd("appmesh.k8s.aws", "Mesh", "meshes", "v1beta2", scope="Cluster"),
        *(
            _crd("appmesh.k8s.aws", kind, f"{kind.lower()}s", "v1beta2")
            for kind in ("VirtualService", "VirtualRouter", "VirtualNode")
        ),
    ]
    async with _runtime(tmp_path, *crds, *_fixture("appmesh")) as runtime:
        await _healthy_then_new_image(
            runtime, "catalog", "catalog", "example/catalog:green", namespace
        )
        await eventually(
            lambda: _status(runtime, "catalog", namespace).get("pauseConditions"),
            timeout=60,
            what="paused at step 2",
        )
        status = _status(runtime, "catalog", namespace)
        router = _get(runtime, mesh_api, "VirtualRouter", "catalog-router", namespace)
        assert router is not None
        targets = router["spec"]["routes"][0]["httpRoute"]["action"]["weightedTargets"]
        assert [t["weight"] for t in targets] == [25, 75]
        canary_node = _get(runtime, mesh_api, "VirtualNode", "catalog-canary-vn", namespace)
        assert canary_node is not None
        labels = canary_node["spec"]["podSelector"]["matchLabels"]
        assert labels == {"app": "catalog", "rollouts-pod-template-hash": status["currentPodHash"]}
        address = await eventually(
            lambda: _address(runtime, mesh_api, "VirtualService", "catalog", namespace),
            timeout=20,
            what="address",
        )
        await _answers(address, Counter({"blue": 30, "green": 10}), what="25 % on green")

        rollouts_actions.abort(runtime.cluster, namespace, "catalog")
        await _answers(address, Counter({"blue": 10}), what="every request on blue")
        router = _get(runtime, mesh_api, "VirtualRouter", "catalog-router", namespace)
        assert router is not None
        targets = router["spec"]["routes"][0]["httpRoute"]["action"]["weightedTargets"]
        assert [t["weight"] for t in targets] == [0, 100]
