"""Task order: phase, wave, Argo CD's kind table, name; dependency moves; prune waves."""

from __future__ import annotations

from headway.sync.hooks import SyncPhase
from headway.sync.planner import plan_sync
from headway.sync.tasks import Action
from headway.sync.waves import KIND_ORDER, kind_rank
from sync.objects import crd, hook, obj


def names(plan_tasks: object) -> list[str]:
    return [str(t.key) for t in plan_tasks]  # type: ignore[attr-defined]


# Facts the kind table must satisfy, stated independently of it: Argo CD's sync-waves page
# says that within a wave Namespaces come first, then the other Kubernetes kinds, then custom
# resources; Helm's install order (which gitops-engine takes over) exists so that what a
# resource refers to is applied before it. Each pair is (applied first, applied after).
DEPENDENCIES = [
    ("ResourceQuota", "Pod"),  # a quota must exist before the pods it limits
    ("LimitRange", "Pod"),
    ("ServiceAccount", "Deployment"),  # pods name their service account
    ("Secret", "Deployment"),  # ... and mount secrets and config maps
    ("ConfigMap", "Deployment"),
    ("StorageClass", "PersistentVolumeClaim"),  # a claim names its class
    ("PersistentVolume", "PersistentVolumeClaim"),
    ("PersistentVolumeClaim", "StatefulSet"),
    ("ClusterRole", "ClusterRoleBinding"),  # a binding refers to its role
    ("Role", "RoleBinding"),
    ("Service", "Deployment"),  # Helm starts services before the workloads behind them
    ("Deployment", "HorizontalPodAutoscaler"),  # an HPA targets an existing workload
    ("Service", "Ingress"),  # an Ingress routes to a Service
    ("IngressClass", "Ingress"),  # ... through its class
]


def test_namespaces_come_before_every_other_known_kind() -> None:
    later = [kind for kind in KIND_ORDER if kind != "Namespace"]
    assert later, "the kind table lists more than Namespace"
    assert all(kind_rank("Namespace") < kind_rank(kind) for kind in later)


def test_what_a_resource_refers_to_is_applied_before_it() -> None:
    wrong = [(a, b) for a, b in DEPENDENCIES if not kind_rank(a) < kind_rank(b)]
    assert wrong == []


def test_custom_kinds_go_after_every_known_kind_and_tie_among_themselves() -> None:
    last_known = max(kind_rank(kind) for kind in ("APIService", "Ingress", "Namespace", "Job"))
    assert kind_rank("Rollout") > last_known
    assert kind_rank("Rollout") == kind_rank("Widget")


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
