"""Task order: phase, wave, Argo CD's kind table, name; dependency moves; prune waves."""

from __future__ import annotations

from headway.sync.hooks import SyncPhase
from headway.sync.planner import plan_sync
from headway.sync.tasks import Action
from headway.sync.waves import KIND_ORDER, kind_rank

from .objects import crd, hook, obj


def names(plan_tasks: object) -> list[str]:
    return [str(t.key) for t in plan_tasks]  # type: ignore[attr-defined]


def test_kind_table_is_gitops_engines() -> None:
    assert list(KIND_ORDER)[:14] == [
        "Namespace",
        "NetworkPolicy",
        "ResourceQuota",
        "LimitRange",
        "PodSecurityPolicy",
        "PodDisruptionBudget",
        "ServiceAccount",
        "Secret",
        "SecretList",
        "ConfigMap",
        "StorageClass",
        "PersistentVolume",
        "PersistentVolumeClaim",
        "CustomResourceDefinition",
    ]
    assert list(KIND_ORDER)[-4:] == ["CronJob", "IngressClass", "Ingress", "APIService"]
    assert len(KIND_ORDER) == 35
    assert kind_rank("Service") < kind_rank("Deployment") < kind_rank("HorizontalPodAutoscaler")
    assert kind_rank("Rollout") > kind_rank("APIService")  # custom kinds go last


def test_same_wave_sorts_by_kind_then_name() -> None:
    desired = [
        obj("Ingress", "web"),
        obj("Deployment", "b"),
        obj("Deployment", "a"),
        obj("Rollout", "checkout"),
        obj("Service", "web"),
        obj("ConfigMap", "cfg"),
        obj("ServiceAccount", "sa"),
        obj("Namespace", "shop"),
    ]
    plan = plan_sync(desired, [])
    assert names(plan.tasks) == [
        "Namespace/shop",
        "ServiceAccount/sa",
        "ConfigMap/cfg",
        "Service/web",
        "Deployment/a",
        "Deployment/b",
        "Ingress/web",
        "Rollout/checkout",
    ]


def test_phase_beats_wave_beats_kind() -> None:
    desired = [
        obj("Namespace", "late", wave=5),
        obj("Deployment", "api", wave=-1),
        hook("Job", "migrate", "PreSync", wave=10),
        hook("Job", "smoke", "PostSync", wave=-5),
    ]
    plan = plan_sync(desired, [])
    assert [(t.phase, t.wave, t.key.name) for t in plan.tasks] == [
        (SyncPhase.PRE_SYNC, 10, "migrate"),
        (SyncPhase.SYNC, -1, "api"),
        (SyncPhase.SYNC, 5, "late"),
        (SyncPhase.POST_SYNC, -5, "smoke"),
    ]


def test_namespace_moves_ahead_of_first_resource_in_it_and_takes_its_wave() -> None:
    desired = [obj("ConfigMap", "cfg", namespace="team", wave=0), obj("Namespace", "team", wave=3)]
    plan = plan_sync(desired, [])
    assert [(str(t.key), t.wave) for t in plan.tasks] == [
        ("Namespace/team", 0),
        ("ConfigMap/cfg", 0),
    ]


def test_crd_moves_ahead_of_its_custom_resources() -> None:
    desired = [
        obj("Widget", "w1", api_version="example.com/v1", wave=-2),
        crd("example.com", "Widget", wave=4),
        obj("Gadget", "g1", api_version="other.io/v1", wave=-3),
    ]
    plan = plan_sync(desired, [])
    assert [(str(t.key), t.wave) for t in plan.tasks] == [
        ("Gadget/g1", -3),
        ("CustomResourceDefinition/widgets.example.com", -2),
        ("Widget/w1", -2),
    ]


def test_prune_waves_are_mirrored_and_pruned_before_applies_in_a_wave() -> None:
    live = [
        obj("ConfigMap", "old-a", wave=-1),
        obj("ConfigMap", "old-b", wave=0),
        obj("ConfigMap", "old-c", wave=2),
        obj("Deployment", "api", wave=2),
    ]
    desired = [obj("Deployment", "api", wave=2)]
    plan = plan_sync(desired, live)
    prunes = {t.key.name: t.wave for t in plan.tasks if t.action is Action.PRUNE}
    assert prunes == {"old-a": 2, "old-b": 0, "old-c": -1}
    steps = plan.waves()
    assert [(s.wave, [str(t.key) for t in s.tasks]) for s in steps] == [
        (-1, ["ConfigMap/old-c"]),
        (0, ["ConfigMap/old-b"]),
        (2, ["ConfigMap/old-a", "Deployment/api"]),
    ]
    last = steps[-1]
    assert [t.key.name for t in last.prunes] == ["old-a"]
    assert [t.key.name for t in last.applies] == ["api"]


def test_live_objects_of_other_phases_and_hooks_are_not_pruned() -> None:
    live = [hook("Job", "migrate", "PreSync"), obj("ConfigMap", "gone")]
    plan = plan_sync([], live)
    assert [(t.action, t.key.name) for t in plan.tasks] == [(Action.PRUNE, "gone")]
