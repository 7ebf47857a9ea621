"""End to end through the Rollout controller: Istio subset-level splitting. The controller
writes the pod-template hashes into the DestinationRule's subsets and the weights into the
VirtualService's subset destinations; the local mesh routes each subset to the Pods carrying
its labels. A canary pauses at 25 % with real traffic split 30/10 between v1 and v2 behind one
Service, and an abort sends every request back to v1."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from router_e2e import (
    address,
    apply,
    healthy,
    only_version,
    paused,
    rollout,
    running,
    services,
    split_event,
    status,
    versions,
)

from headway.cluster.local.runtime import Runtime
from headway.model.obj import Obj
from headway.steering import rollouts as rollouts_actions
from polling import eventually

pytestmark = pytest.mark.slow

ISTIO = "networking.istio.io/v1beta1"
HASH = "rollouts-pod-template-hash"
ROUTING = {
    "istio": {
        "virtualService": {"name": "web", "routes": ["primary"]},
        "destinationRule": {
            "name": "web",
            "canarySubsetName": "canary",
            "stableSubsetName": "stable",
        },
    }
}


def _destination(subset: str, weight: int) -> dict[str, Any]:
    return {
        "destination": {"host": "web", "subset": subset, "port": {"number": 80}},
        "weight": weight,
    }


def _istio_objects() -> list[Obj]:
    rule = {
        "apiVersion": ISTIO,
        "kind": "DestinationRule",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"host": "web", "subsets": [{"name": "stable"}, {"name": "canary"}]},
    }
    vs = {
        "apiVersion": ISTIO,
        "kind": "VirtualService",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "hosts": ["web"],
            "http": [
                {
                    "name": "primary",
                    "route": [_destination("stable", 100), _destination("canary", 0)],
                }
            ],
        },
    }
    return [rule, vs]


def _rollout(version: str) -> Obj:
    """Subset-level: no stable or canary Service, one Service `web` for both subsets."""
    return rollout(version, routing=ROUTING, stable_service=None, canary_service=None)


def _get(runtime: Runtime, kind: str) -> Obj:
    return runtime.cluster.get(ISTIO, kind, "web", "default")


async def test_subset_canary_and_abort_with_real_traffic(tmp_path: Path) -> None:
    async with running(tmp_path) as runtime:
        apply(runtime, *services("web"), *_istio_objects(), _rollout("v1"))
        await healthy(runtime, "v1 Healthy")
        apply(runtime, _rollout("v2"))
        await paused(runtime, "paused at step 2")
        stable_hash, canary_hash = status(runtime)["stableRS"], status(runtime)["currentPodHash"]
        assert stable_hash != canary_hash
        rule = _get(runtime, "DestinationRule")
        assert (
            rule["metadata"]["annotations"]["argo-rollouts.argoproj.io/managed-by-rollouts"]
            == "web"
        )
        assert rule["spec"] == {
            "host": "web",
            "subsets": [
                {"name": "stable", "labels": {HASH: stable_hash}},
                {"name": "canary", "labels": {HASH: canary_hash}},
            ],
        }
        assert _get(runtime, "VirtualService")["spec"]["http"] == [
            {"name": "primary", "route": [_destination("stable", 75), _destination("canary", 25)]}
        ]
        url = await address(runtime, (ISTIO, "VirtualService", "web"))
        await eventually(
            lambda: split_event(runtime, "web", "web#canary", 25), timeout=10, what="mesh at 25%"
        )
        split = await versions(url, 40)
        assert split == Counter({"v1": 30, "v2": 10}), split

        rollouts_actions.abort(runtime.cluster, "default", "web")
        await only_version(url, "v1")
        assert await versions(url, 20) == Counter({"v1": 20})
        assert _get(runtime, "VirtualService")["spec"]["http"] == [
            {"name": "primary", "route": [_destination("stable", 100), _destination("canary", 0)]}
        ]
