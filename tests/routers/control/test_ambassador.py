"""The Ambassador reconciler keeps a canary Mapping beside each base Mapping as Argo Rollouts
does, on the store and through the Kubernetes backend.

Expected objects checked against argo-rollouts `rollout/trafficrouting/ambassador/
ambassador.go`: `SetWeight` -> `handleCanaryMapping` (create at the first weight above 0,
update the weight, set 0 then delete), `createCanaryMapping` (a base Mapping with a weight is
refused), `buildCanaryMapping` (metadata replaced by name and namespace, `spec.service` via
`buildCanaryService`, `spec.weight`), `buildCanaryMappingName` (`-canary`, base cut to 246),
`formatErrors`; the API version from `utils/defaults/defaults.go` (`getambassador.io/v2`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from headway.cluster.errors import NotFound
from headway.cluster.protocol import Cluster
from headway.rollout.plan import HeaderRoute, MirrorRoute, WeightDestination
from headway.routers.control.ambassador import AmbassadorReconciler, canary_mapping_name
from headway.routers.control.objects import RolloutIdentity
from headway.routers.control.reconciler import TrafficRoutingError, TrafficRoutingReconciler
from routers.control.helpers import BACKENDS, backend_cluster, crd, stored_rollout, stripped

API = "getambassador.io/v2"
MAPPING_CRD = crd(
    group="getambassador.io", kind="Mapping", plural="mappings", versions=("v2", "v3alpha1")
)


def _mapping(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": API,
        "kind": "Mapping",
        "metadata": {
            "name": name,
            "namespace": "default",
            "labels": {"team": "shop"},
            "annotations": {"note": "kept on the base only"},
        },
        "spec": {"prefix": "/shop/", "rewrite": "/", "resolver": "endpoint", **spec},
    }


@pytest.fixture(params=BACKENDS)
def cluster(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Cluster]:
    with backend_cluster(request.param, tmp_path, MAPPING_CRD) as opened:
        yield opened


def _router(cluster: Cluster, rollout: RolloutIdentity, *mappings: str) -> TrafficRoutingReconciler:
    return AmbassadorReconciler(
        cluster,
        rollout=rollout,
        mappings=mappings or ("shop",),
        stable_service="shop-stable",
        canary_service="shop-canary",
    )


def _canary(cluster: Cluster, base: str = "shop") -> dict[str, Any]:
    return stripped(cluster.get(API, "Mapping", canary_mapping_name(base), "default"))


def _absent(cluster: Cluster, name: str) -> bool:
    try:
        cluster.get(API, "Mapping", name, "default")
    except NotFound:
        return True
    return False


def test_first_weight_clones_the_base_mapping_with_the_canary_service(cluster: Cluster) -> None:
    rollout = stored_rollout(cluster)
    cluster.apply(_mapping("shop", service="shop-stable.default:8080"), field_manager="git")
    router = _router(cluster, rollout)

    router.set_weight(0)
    assert _absent(cluster, "shop-canary")  # weight 0 and none there: nothing is written
    router.set_weight(30)

    assert _canary(cluster) == {
        "apiVersion": API,
        "kind": "Mapping",
        "metadata": {
            "name": "shop-canary",
            "namespace": "default",
            "ownerReferences": [rollout.owner_reference()],
        },
        "spec": {
            "prefix": "/shop/",
            "rewrite": "/",
            "resolver": "endpoint",
            "service": "shop-canary.default:8080",
            "weight": 30,
        },
    }
    base = stripped(cluster.get(API, "Mapping", "shop", "default"))
    assert base["spec"] == _mapping("shop", service="shop-stable.default:8080")["spec"]
    assert router.verify_weight(30) is True


def test_later_weights_change_only_the_weight_and_zero_deletes_it(cluster: Cluster) -> None:
    rollout = stored_rollout(cluster)
    cluster.apply(_mapping("shop", service="shop-stable:80"), field_manager="git")
    router = _router(cluster, rollout)
    router.set_weight(10)
    cluster.apply(_mapping("shop", service="shop-stable:80", timeout_ms=9000), field_manager="git")

    router.set_weight(60)
    spec = _canary(cluster)["spec"]
    assert spec == {
        "prefix": "/shop/",
        "rewrite": "/",
        "resolver": "endpoint",
        "service": "shop-canary:80",
        "weight": 60,
    }  # not re-cloned: the base's later timeout_ms is not copied (as Argo's update)
    assert router.verify_weight(50) is False

    router.set_weight(0)
    assert _absent(cluster, "shop-canary")
    assert router.verify_weight(0) is True
    assert not _absent(cluster, "shop")


def test_every_base_mapping_gets_its_own_canary(cluster: Cluster) -> None:
    rollout = stored_rollout(cluster)
    long_name = "m" * 250
    cluster.apply(_mapping("shop", service="shop-stable"), field_manager="git")
    cluster.apply(_mapping(long_name, service="http://shop-stable:80"), field_manager="git")
    router = _router(cluster, rollout, "shop", long_name)

    router.set_weight(25)

    assert canary_mapping_name(long_name) == "m" * 246 + "-canary"
    assert _canary(cluster, long_name)["spec"]["service"] == "http://shop-canary:80"
    assert _canary(cluster, "shop")["spec"]["weight"] == 25


def test_a_base_mapping_with_a_weight_is_refused(cluster: Cluster) -> None:
    rollout = stored_rollout(cluster)
    cluster.apply(_mapping("shop", service="shop-stable", weight=50), field_manager="git")

    with pytest.raises(TrafficRoutingError, match="'shop' can not define weight"):
        _router(cluster, rollout).set_weight(10)
    assert _absent(cluster, "shop-canary")


def test_missing_base_mappings_are_all_reported(cluster: Cluster) -> None:
    rollout = stored_rollout(cluster)
    cluster.apply(_mapping("shop", service="shop-stable"), field_manager="git")
    router = _router(cluster, rollout, "gone", "shop", "lost")

    with pytest.raises(TrafficRoutingError) as raised:
        router.set_weight(10)

    assert str(raised.value) == (
        "2 errors found: [Ambassador mapping 'gone' not found][Ambassador mapping 'lost' not found]"
    )
    assert _canary(cluster, "shop")["spec"]["weight"] == 10  # the others still moved


def test_experiment_destinations_are_refused(cluster: Cluster) -> None:
    """Argo's SetWeight ignores them (its validation refuses a weighted experiment here)."""
    rollout = stored_rollout(cluster)
    cluster.apply(_mapping("shop", service="shop-stable"), field_manager="git")
    template = WeightDestination(service_name="shop-exp", pod_template_hash="abc", weight=10)
    with pytest.raises(TrafficRoutingError, match=r"Ambassador router cannot .*\(shop-exp\)"):
        _router(cluster, rollout).set_weight(20, [template])
    assert _absent(cluster, "shop-canary")


def test_header_and_mirror_routes_are_refused(cluster: Cluster) -> None:
    router = _router(cluster, stored_rollout(cluster))
    with pytest.raises(TrafficRoutingError, match="Ambassador router has no header routes"):
        router.set_header_route(HeaderRoute(name="qa", match=()))
    with pytest.raises(TrafficRoutingError, match="Ambassador router cannot mirror"):
        router.set_mirror_route(MirrorRoute(name="shadow", match=({"method": {"exact": "GET"}},)))


def test_deleting_the_rollout_mid_canary_deletes_its_canary_mapping(cluster: Cluster) -> None:
    """Headway's difference: Argo's canary Mapping has no owner and outlives the Rollout,
    still sending its weight to a canary Service whose pods are gone."""
    rollout = stored_rollout(cluster)
    cluster.apply(_mapping("shop", service="shop-stable"), field_manager="git")
    _router(cluster, rollout).set_weight(40)

    cluster.delete("argoproj.io/v1alpha1", "Rollout", rollout.name, "default")

    assert _absent(cluster, "shop-canary")
    assert not _absent(cluster, "shop")
