"""A weighted experiment through SMI, ALB and the Gateway API plugin on the local runtime
(Istio: tests/e2e_rollouts/test_weighted_experiment.py): the Rollout controller writes the
templates into the TrafficSplit / the ALB action / the HTTPRoute's backendRefs as Argo (and the
plugin's `HandleExperiment`) does, the local mesh splits real requests to the templates'
Services, and an abort leaves only the stable.

Each answer of the demo app names its Pod (`VERSION POD`); a template's Pods are named after
its ReplicaSet `<experiment>-<template>-<hash>`."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import httpx2
import pytest
from router_e2e import ROUTED, address, apply, rollout, running, services, status

from headway.cluster.local.runtime import Runtime
from headway.steering.rollouts import abort
from polling import eventually, eventually_async

pytestmark = pytest.mark.slow

STEPS: list[dict[str, Any]] = [
    {"setWeight": 20},
    {"experiment": {
        "duration": "30m",  # ended by the abort, never by the clock
        "scaleDownDelaySeconds": 0,
        "templates": [{"name": "baseline", "specRef": "stable", "weight": 10},
                      {"name": "canary", "specRef": "canary", "weight": 10}],
    }},
    {"pause": {}},
]


def _experiment(runtime: Runtime) -> str:
    found = runtime.cluster.list("argoproj.io/v1alpha1", "Experiment", namespace="default")
    return str(found[0]["metadata"]["name"]) if found else ""


def _split(runtime: Runtime, router: str) -> list[tuple[str, int]]:
    """(Service, weight) in the order the router object lists them."""
    api, kind, name = ROUTED[router].routed
    obj = runtime.cluster.get(api, kind, name, "default")
    if router == "smi":
        return [(b["service"], int(b["weight"])) for b in obj["spec"]["backends"]]
    if router == "gatewayapi":
        refs = obj["spec"]["rules"][0]["backendRefs"]
        return [(r["name"], int(r.get("weight", 1))) for r in refs]
    action = obj["metadata"]["annotations"]["alb.ingress.kubernetes.io/actions.web"]
    groups = json.loads(action)["ForwardConfig"]["TargetGroups"]
    return [(g["ServiceName"], int(g["Weight"])) for g in groups]


async def _count(url: str, experiment: str, requests: int) -> Counter[str]:
    seen: Counter[str] = Counter()
    async with httpx2.AsyncClient(timeout=5) as client:
        for _ in range(requests):
            response = await client.get(f"http://{url}/")
            version, _, pod = response.text.strip().partition(" ")
            template = next((t for t in ("baseline", "canary")
                             if pod.startswith(f"{experiment}-{t}-")), None)
            key = f"template {template}" if template else version
            seen[key if response.status_code == 200 else str(response.status_code)] += 1
    return seen


def _in_order(router: str, split: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """The split as `router` lists it: the plugin keeps the route's stable, canary order and
    appends the templates."""
    if router != "gatewayapi":
        return split
    rank = {"web-stable": 0, "web-canary": 1}
    return sorted(split, key=lambda entry: rank.get(entry[0], 2))


@pytest.mark.parametrize("router", ["smi", "alb", "gatewayapi"])
async def test_a_weighted_experiment_splits_real_traffic_then_an_abort_ends_it(
    tmp_path: Path, router: str
) -> None:
    routing = ROUTED[router].routing
    async with running(tmp_path, experiments=True) as runtime:
        apply(runtime, *ROUTED[router].objects, *services(),
              rollout("v1", routing=routing, steps=STEPS))
        await eventually(lambda: status(runtime).get("phase") == "Healthy", timeout=25,
                         what="v1 Healthy")
        apply(runtime, rollout("v2", routing=routing, steps=STEPS))
        experiment = await eventually(lambda: _experiment(runtime), timeout=25,
                                      what="the Experiment")
        wanted_split = _in_order(router, [("web-canary", 20), (f"{experiment}-baseline", 10),
                                          (f"{experiment}-canary", 10), ("web-stable", 60)])
        await eventually(lambda: _split(runtime, router) == wanted_split, timeout=60,
                         what=f"the templates in the {router} object")
        url = await address(runtime, ROUTED[router].routed)
        wanted = Counter({"v1": 60, "v2": 20, "template baseline": 10, "template canary": 10})

        async def exact() -> bool:
            return await _count(url, experiment, 100) == wanted

        await eventually_async(exact, timeout=30, what=f"100 requests split {dict(wanted)}")

        abort(runtime.cluster, "default", "web")
        ended = _in_order(router, [("web-canary", 0), ("web-stable", 100)])
        await eventually(lambda: _split(runtime, router) == ended,
                         timeout=30, what="the abort's split")

        async def only_stable() -> bool:
            return await _count(url, experiment, 40) == Counter({"v1": 40})

        await eventually_async(only_stable, timeout=30, what="every request answered by v1")
