"""A weighted experiment's templates, as each router writes them (Argo's `additionalDestinations`).

Expected objects worked out from argo-rollouts at 9f8d111: SMI `trafficSplitV1Alpha1`
(`rollout/trafficrouting/smi/smi.go`), ALB `getForwardActionString`
(`rollout/trafficrouting/alb/alb.go`), Istio `processRoutes` / `patchVirtualService` and
`UpdateHash` (`rollout/trafficrouting/istio/istio.go`). NGINX and Traefik have no place for
them: Argo ignores them there; Headway refuses. The Gateway API plugin's are in
test_gateway_api_experiment.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from headway.clock import VirtualClock
from headway.cluster.local import LocalCluster
from headway.rollout.plan import WeightDestination
from headway.routers.control.alb import ALBReconciler
from headway.routers.control.istio import IstioReconciler
from headway.routers.control.nginx import NginxReconciler
from headway.routers.control.reconciler import TrafficRoutingError, TrafficRoutingReconciler
from headway.routers.control.smi import SMIReconciler
from headway.routers.control.traefik import TraefikReconciler
from routers.control.helpers import crd, local_cluster, stored_rollout

ISTIO = "networking.istio.io/v1beta1"
BASELINE = WeightDestination("exp-baseline", "b1", 10)
CANARY_TEMPLATE = WeightDestination("exp-canary", "c1", 15)
SMI_CRD = crd(group="split.smi-spec.io", kind="TrafficSplit", plural="trafficsplits",
              versions=("v1alpha1",))


@pytest.fixture
def cluster(tmp_path: Path, clock: VirtualClock) -> LocalCluster:
    return local_cluster(tmp_path, clock, SMI_CRD)


def _dest(host: str, weight: int, **extra: Any) -> dict[str, Any]:
    return {"destination": {"host": host, **extra}, "weight": weight}


def _virtual_service(cluster: LocalCluster, route: list[dict[str, Any]]) -> None:
    cluster.apply({"apiVersion": ISTIO, "kind": "VirtualService",
                   "metadata": {"name": "shop", "namespace": "default"},
                   "spec": {"http": [{"name": "primary", "route": route}]}},
                  field_manager="git")


def _route(cluster: LocalCluster) -> Any:
    vs = cluster.get(ISTIO, "VirtualService", "shop", "default")
    return vs["spec"]["http"][0]["route"]


def _istio(cluster: LocalCluster, rule: dict[str, Any] | None = None) -> IstioReconciler:
    return IstioReconciler(cluster, namespace="default",
                           virtual_services=[{"name": "shop", "routes": ["primary"]}],
                           stable_service="shop-stable", canary_service="shop-canary",
                           destination_rule=rule, rollout_name="shop")


def test_smi_puts_the_templates_between_canary_and_stable(cluster: LocalCluster) -> None:
    """trafficSplitV1Alpha1: canary, each additional destination, then the stable with
    100 - canary - the additional weights."""
    router: TrafficRoutingReconciler = SMIReconciler(
        cluster, rollout=stored_rollout(cluster), stable_service="shop-stable",
        canary_service="shop-canary")
    router.set_weight(20, (BASELINE, CANARY_TEMPLATE))
    split = cluster.get("split.smi-spec.io/v1alpha1", "TrafficSplit", "shop", "default")
    assert split["spec"] == {"service": "shop-stable", "backends": [
        {"service": "shop-canary", "weight": "20"},
        {"service": "exp-baseline", "weight": "10"},
        {"service": "exp-canary", "weight": "15"},
        {"service": "shop-stable", "weight": "55"},
    ]}
    assert router.verify_weight(20, (BASELINE, CANARY_TEMPLATE)) is True
    assert router.verify_weight(20) is False  # the templates' backends are still there
    router.set_weight(20)  # the experiment ended: back to two backends
    split = cluster.get("split.smi-spec.io/v1alpha1", "TrafficSplit", "shop", "default")
    assert [b["service"] for b in split["spec"]["backends"]] == ["shop-canary", "shop-stable"]
    assert split["spec"]["backends"][1]["weight"] == "80"


def test_alb_forwards_to_a_target_group_per_template(cluster: LocalCluster) -> None:
    """getForwardActionString: the canary's target group, one per additional destination on
    the same port, then the stable's with what is left."""
    cluster.apply({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
                   "metadata": {"name": "shop", "namespace": "default"},
                   "spec": {"rules": [{"http": {"paths": [{
                       "path": "/", "pathType": "Prefix",
                       "backend": {"service": {"name": "shop-stable",
                                               "port": {"name": "use-annotation"}}}}]}}]}},
                  field_manager="git")
    router = ALBReconciler(cluster, rollout=stored_rollout(cluster), ingresses=["shop"],
                           stable_service="shop-stable", canary_service="shop-canary",
                           service_port=80)
    router.set_weight(20, (BASELINE, CANARY_TEMPLATE))
    annotations = cluster.get("networking.k8s.io/v1", "Ingress", "shop", "default")[
        "metadata"]["annotations"]
    assert annotations["alb.ingress.kubernetes.io/actions.shop-stable"] == (
        '{"Type":"forward","ForwardConfig":{"TargetGroups":['
        '{"ServiceName":"shop-canary","ServicePort":"80","Weight":20},'
        '{"ServiceName":"exp-baseline","ServicePort":"80","Weight":10},'
        '{"ServiceName":"exp-canary","ServicePort":"80","Weight":15},'
        '{"ServiceName":"shop-stable","ServicePort":"80","Weight":55}]}}'
    )
    assert router.verify_weight(20, (BASELINE, CANARY_TEMPLATE)) is True
    assert router.verify_weight(20) is False


def test_istio_appends_template_hosts_in_name_order_and_drops_them_after(
    cluster: LocalCluster,
) -> None:
    """processRoutes: stable gets 100 - canary - templates; a template without a destination
    gets `{destination: {host}, weight}` appended (hosts sorted); an existing one keeps its
    place and fields; anything else in the route is deleted (so is an ended template's)."""
    _virtual_service(cluster, [_dest("shop-stable", 100, port={"number": 80}),
                               _dest("shop-canary", 0, port={"number": 80})])
    router = _istio(cluster)
    router.set_weight(20, (CANARY_TEMPLATE, BASELINE))
    assert _route(cluster) == [
        _dest("shop-stable", 55, port={"number": 80}),
        _dest("shop-canary", 20, port={"number": 80}),
        _dest("exp-baseline", 10),
        _dest("exp-canary", 15),
    ]
    assert router.verify_weight(20, (BASELINE, CANARY_TEMPLATE)) is True
    assert router.verify_weight(20, (BASELINE,)) is False
    router.set_weight(30, (WeightDestination("exp-canary", "c1", 5),))
    assert _route(cluster) == [
        _dest("shop-stable", 65, port={"number": 80}),
        _dest("shop-canary", 30, port={"number": 80}),
        _dest("exp-canary", 5),
    ]
    router.set_weight(30)
    assert _route(cluster) == [
        _dest("shop-stable", 70, port={"number": 80}),
        _dest("shop-canary", 30, port={"number": 80}),
    ]


def test_istio_never_writes_a_negative_stable_weight(cluster: LocalCluster) -> None:
    _virtual_service(cluster, [_dest("shop-stable", 100), _dest("shop-canary", 0)])
    _istio(cluster).set_weight(90, (BASELINE,CANARY_TEMPLATE))
    assert _route(cluster)[0] == _dest("shop-stable", 0)  # Argo clamps at 0


def test_istio_subsets_get_one_per_template_and_kept_subsets_keep_weight(
    cluster: LocalCluster,
) -> None:
    """UpdateHash adds a subset named after each template's Service with its hash; in the
    route, an `additionalSubsetNames` destination keeps its weight and takes it from the
    stable's."""
    cluster.apply({"apiVersion": ISTIO, "kind": "DestinationRule",
                   "metadata": {"name": "shop", "namespace": "default"},
                   "spec": {"host": "shop", "subsets": [
                       {"name": "stable", "labels": {"app": "shop"}},
                       {"name": "canary", "labels": {"app": "shop"}}]}}, field_manager="git")
    _virtual_service(cluster, [_dest("shop", 100, subset="stable"),
                               _dest("shop", 0, subset="canary"),
                               _dest("shop", 5, subset="mirror")])
    rule = {"name": "shop", "canarySubsetName": "canary", "stableSubsetName": "stable",
            "additionalSubsetNames": ["mirror"]}
    router = _istio(cluster, rule)
    router.update_hash("h2", "h1", (CANARY_TEMPLATE, BASELINE))
    router.set_weight(20, (BASELINE,))
    subsets = cluster.get(ISTIO, "DestinationRule", "shop", "default")["spec"]["subsets"]
    assert subsets == [
        {"name": "stable", "labels": {"app": "shop", "rollouts-pod-template-hash": "h1"}},
        {"name": "canary", "labels": {"app": "shop", "rollouts-pod-template-hash": "h2"}},
        {"name": "exp-baseline", "labels": {"rollouts-pod-template-hash": "b1"}},
        {"name": "exp-canary", "labels": {"rollouts-pod-template-hash": "c1"}},
    ]
    assert _route(cluster) == [
        _dest("shop", 65, subset="stable"),
        _dest("shop", 20, subset="canary"),
        _dest("shop", 5, subset="mirror"),
        _dest("exp-baseline", 10),
    ]


def test_routers_without_extra_destinations_refuse_them(cluster: LocalCluster) -> None:
    """Argo validation refuses nginx and traefik; here each fails rather than pretend the
    split happened."""
    rollout = stored_rollout(cluster)
    routers: list[TrafficRoutingReconciler] = [
        NginxReconciler(cluster, rollout=rollout, stable_ingresses=["shop"],
                        stable_service="shop-stable", canary_service="shop-canary"),
        TraefikReconciler(cluster, namespace="default", traefik_service="shop",
                          stable_service="shop-stable", canary_service="shop-canary"),
    ]
    for router in routers:
        with pytest.raises(TrafficRoutingError, match=r"cannot send traffic to experiment "
                           r"templates \(exp-baseline\)"):
            router.set_weight(20, (BASELINE,))
