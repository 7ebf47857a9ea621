"""End to end on the local runtime: an `experiment` step whose baseline (stable) and canary
templates carry `weight: 10` each, through an Istio VirtualService the local mesh realizes.
While the Experiment runs, real requests reach each template's own Pods (through the Services
the Experiment created) in exactly the shares set: of every 100, 60 stable, 20 canary, 10
baseline, 10 canary template. When the Experiment ends, or the rollout is aborted, the
templates' destinations are gone and no request reaches their Pods again.

Each answer of the demo app names its Pod (`VERSION POD`), and a template's Pods are named after
its ReplicaSet `<experiment>-<template>-<hash>`, so a request is counted by who answered it."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import httpx2
import pytest

from e2e_rollouts.manifests import canary_mesh, rollout, routed_canary
from e2e_rollouts.stage import API, FIRST_DEPLOY, ISTIO, Stage
from headway.steering.rollouts import abort
from polling import eventually_async

pytestmark = pytest.mark.slow

STEPS: list[dict[str, Any]] = [
    {"setWeight": 20},
    {"experiment": {
        "duration": "30m",  # ended by the test (terminate or abort), never by the clock
        "scaleDownDelaySeconds": 0,
        "templates": [{"name": "baseline", "specRef": "stable", "weight": 10},
                      {"name": "canary", "specRef": "canary", "weight": 10}],
    }},
    {"setWeight": 60},
    {"pause": {}},
]


def _who(answer: str, experiment: str) -> str:
    """`v2 web-<exp>-canary-<hash>-x7k2p` -> `template canary`; stable and canary by version."""
    version, _, pod = answer.partition(" ")
    for template in ("baseline", "canary"):
        if pod.startswith(f"{experiment}-{template}-"):
            return f"template {template}"
    return version


async def _count(address: str, experiment: str, requests: int = 100) -> Counter[str]:
    """`requests` consecutive real requests, counted by who answered (or the status code)."""
    seen: Counter[str] = Counter()
    async with httpx2.AsyncClient(timeout=5) as client:
        for _ in range(requests):
            response = await client.get(f"http://{address}/")
            ok = response.status_code == 200
            seen[_who(response.text.strip(), experiment) if ok else str(response.status_code)] += 1
    return seen


async def _experiment_serving(stage: Stage) -> tuple[str, str]:
    """Deploy v1, update to v2 and wait for the weighted experiment's four-way split; returns
    the mesh address and the Experiment's name."""
    stage.apply(*canary_mesh(), rollout("v1", routed_canary(STEPS)))
    await stage.until(lambda: stage.rollout_phase() == "Healthy", FIRST_DEPLOY, "v1 Healthy")
    address = str(await stage.until(stage.vs_address, 10, "the mesh address"))
    stage.apply(rollout("v2", routed_canary(STEPS)))
    await stage.until(lambda: stage.vs_weights() == [60, 20, 10, 10], 60,
                      "the templates' destinations in the VirtualService")
    [exp] = stage.cluster.list(API, "Experiment", namespace="default")
    return address, str(exp["metadata"]["name"])


async def _exact_shares(address: str, experiment: str) -> None:
    """The embedded router's split is exact over 100 consecutive requests; the deadline only
    covers the mesh applying the controller's last edit (docs/local-mesh.md)."""
    wanted = Counter({"v1": 60, "v2": 20, "template baseline": 10, "template canary": 10})

    async def exact() -> bool:
        return await _count(address, experiment) == wanted

    await eventually_async(exact, timeout=30, what=f"100 requests split {dict(wanted)}")


async def _templates_unreached(address: str, experiment: str, versions: set[str]) -> None:
    async def only() -> bool:
        return set(await _count(address, experiment, 40)) == versions

    await eventually_async(only, timeout=30, what=f"every request answered by {versions}")


async def test_templates_get_their_share_until_the_experiment_ends(tmp_path: Path) -> None:
    async with Stage.open(tmp_path) as stage:
        address, experiment = await _experiment_serving(stage)
        vs = stage.cluster.get(ISTIO, "VirtualService", "web", "default")
        hosts = [d["destination"]["host"] for d in vs["spec"]["http"][0]["route"]]
        assert hosts == ["web-stable", "web-canary", f"{experiment}-baseline",
                         f"{experiment}-canary"]
        await _exact_shares(address, experiment)
        stage.apply({"apiVersion": API, "kind": "Experiment",
                     "metadata": {"name": experiment, "namespace": "default"},
                     "spec": {"terminate": True}})  # ends it Successful: the step completes
        await stage.until(lambda: stage.vs_weights() == [40, 60], 60, "the next step's split")
        await _templates_unreached(address, experiment, {"v1", "v2"})
        counted = await _count(address, experiment)
        assert counted == Counter({"v1": 40, "v2": 60})

        def services_gone() -> bool:
            names = {s["metadata"]["name"]
                     for s in stage.cluster.list("v1", "Service", namespace="default")}
            return names == {"web-stable", "web-canary"}

        await stage.until(services_gone, 30, "the templates' Services deleted with their pods")


@pytest.mark.parametrize("through_api", [False, True], ids=["local", "kube-api"])
async def test_an_abort_sends_the_templates_share_back_to_stable(
    tmp_path: Path, through_api: bool
) -> None:
    """`kube-api`: the controllers on the kube backend, so the templates' Services are created
    and deleted through the runtime's Kubernetes API, as on a real cluster."""
    async with Stage.open(tmp_path, through_api=through_api) as stage:
        address, experiment = await _experiment_serving(stage)
        await _exact_shares(address, experiment)
        abort(stage.cluster, "default", "web")  # `headway rollouts abort web`
        await stage.until(lambda: stage.vs_weights() == [100, 0], 60, "the abort's split")
        await _templates_unreached(address, experiment, {"v1"})
        assert await _count(address, experiment) == Counter({"v1": 100})
        [exp] = stage.cluster.list(API, "Experiment", namespace="default")
        assert exp["spec"]["terminate"] is True


async def test_the_haproxy_data_plane_carries_the_templates_too(tmp_path: Path) -> None:
    """HAProxy's weighted round-robin is exact only up to a request of phase per hundred
    (docs/traffic-routing.md), so each share is checked within 2 of 200."""
    async with Stage.open(tmp_path, router="haproxy") as stage:
        address, experiment = await _experiment_serving(stage)
        wanted = {"v1": 120, "v2": 40, "template baseline": 20, "template canary": 20}

        async def close_to_wanted() -> bool:
            counted = await _count(address, experiment, 200)
            return sum(counted.values()) == 200 and all(
                abs(counted[who] - share) <= 2 for who, share in wanted.items())

        await eventually_async(close_to_wanted, timeout=30, what=f"200 requests near {wanted}")
        abort(stage.cluster, "default", "web")
        await stage.until(lambda: stage.vs_weights() == [100, 0], 60, "the abort's split")
        await _templates_unreached(address, experiment, {"v1"})
