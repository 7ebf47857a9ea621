"""The Deployment arithmetic, by table (numbers worked out from the Kubernetes equations)."""

from __future__ import annotations

import pytest

from headway.cluster.local.workloads import deployment_math as dm
from headway.kube.pod_template import SAFE_ALPHABET, pod_template_hash

R = dm.ReplicaSetCounts


@pytest.mark.parametrize(
    ("strategy", "desired", "surge", "unavailable"),
    [
        ({}, 10, 3, 2),  # defaults 25%/25%: surge rounds up, unavailable down
        ({}, 1, 1, 0),
        ({"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}}, 4, 0, 1),  # never both 0
        ({"rollingUpdate": {"maxSurge": "50%", "maxUnavailable": "50%"}}, 3, 2, 1),
        ({"rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}, 5, 1, 0),
    ],
)
def test_fenceposts_round_as_kubernetes(
    strategy: dict, desired: int, surge: int, unavailable: int
) -> None:
    posts = dm.deployment_fenceposts(strategy, desired)
    assert (posts.max_surge, posts.max_unavailable) == (surge, unavailable)


@pytest.mark.parametrize(
    ("desired", "surge", "total", "new", "expected"),
    [
        (3, 1, 3, 0, 1),  # room for one surge pod
        (3, 1, 4, 1, 1),  # at D + S: wait
        (3, 3, 3, 0, 3),  # surge covers everything: straight to D
        (10, 3, 10, 0, 3),
        (3, 0, 2, 0, 1),  # old already scaled down by one
        (3, 1, 3, 3, 3),  # done
        (2, 1, 5, 5, 2),  # scaled down Deployment: new goes to D
    ],
)
def test_new_replica_set_scale(
    desired: int, surge: int, total: int, new: int, expected: int
) -> None:
    assert (
        dm.new_replica_set_scale(desired=desired, max_surge=surge, total=total, new_replicas=new)
        == expected
    )


@pytest.mark.parametrize(
    ("desired", "unavailable", "new", "olds", "expected"),
    [
        # new pod not available yet, maxUnavailable 0: nothing may go
        (3, 0, R("new", 1, 0), [R("old", 3, 3, ("1", "old"))], {}),
        # new pod available: one old pod may go
        (3, 0, R("new", 1, 1), [R("old", 3, 3, ("1", "old"))], {"old": 2}),
        # maxUnavailable 1 lets one old pod go before the new one is available
        (3, 1, R("new", 1, 0), [R("old", 3, 3, ("1", "old"))], {"old": 2}),
        # unavailable old pods go first, oldest ReplicaSet first
        (4, 1, R("new", 1, 1), [R("a", 2, 0, ("1", "a")), R("b", 2, 2, ("2", "b"))], {"a": 0}),
        # budget left after the unhealthy ones: available old pods of the oldest set go next
        (
            4,
            2,
            R("new", 1, 1),
            [R("a", 2, 2, ("1", "a")), R("b", 2, 2, ("2", "b"))],
            {"a": 0, "b": 1},
        ),
        # everything new and available: the rest of the old goes
        (2, 0, R("new", 2, 2), [R("old", 2, 2, ("1", "old"))], {"old": 0}),
        # no old replicas: nothing to do
        (2, 0, R("new", 2, 2), [R("old", 0, 0, ("1", "old"))], {}),
    ],
)
def test_old_replica_sets_scale_down(
    desired: int,
    unavailable: int,
    new: dm.ReplicaSetCounts,
    olds: list[dm.ReplicaSetCounts],
    expected: dict[str, int],
) -> None:
    got = dm.old_replica_sets_scale_down(
        desired=desired, max_unavailable=unavailable, new=new, olds=olds
    )
    assert got == expected


def test_rolling_update_never_exceeds_surge_or_unavailability() -> None:
    """Play a whole rollout with instant readiness: the bounds hold at every step."""
    desired, posts = (
        5,
        dm.deployment_fenceposts({"rollingUpdate": {"maxSurge": 1, "maxUnavailable": 1}}, 5),
    )
    old, new = 5, 0
    for _ in range(50):
        if new == desired and old == 0:
            break
        target = dm.new_replica_set_scale(
            desired=desired, max_surge=posts.max_surge, total=old + new, new_replicas=new
        )
        if target != new:
            new = target
        else:
            cuts = dm.old_replica_sets_scale_down(
                desired=desired,
                max_unavailable=posts.max_unavailable,
                new=R("new", new, new),
                olds=[R("old", old, old)],
            )
            old = cuts.get("old", old)
        assert old + new <= desired + posts.max_surge
        assert old + new >= desired - posts.max_unavailable
    assert (old, new) == (0, desired)


def test_template_hash_is_stable_and_changes_with_the_image() -> None:
    template = {
        "metadata": {"labels": {"app": "web"}},
        "spec": {"containers": [{"name": "app", "image": "demo:v1"}]},
    }
    again = {
        "spec": {"containers": [{"image": "demo:v1", "name": "app"}]},
        "metadata": {"labels": {"app": "web", "pod-template-hash": "ignored"}},
    }
    changed = {
        "metadata": {"labels": {"app": "web"}},
        "spec": {"containers": [{"name": "app", "image": "demo:v2"}]},
    }
    h = pod_template_hash(template)
    assert h == pod_template_hash(again)
    assert h != pod_template_hash(changed)
    assert h != pod_template_hash(template, collision_count=1)
    assert set(h) <= set(SAFE_ALPHABET)


@pytest.mark.parametrize(
    ("sets", "new", "expected"),
    [
        (
            [
                {
                    "spec": {"replicas": 3},
                    "status": {"replicas": 3, "readyReplicas": 2, "availableReplicas": 2},
                }
            ],
            0,
            dm.DeploymentCounts(3, 3, 2, 2, 1),
        ),
        (
            [
                {
                    "spec": {"replicas": 1},
                    "status": {"replicas": 1, "readyReplicas": 1, "availableReplicas": 1},
                },
                {
                    "spec": {"replicas": 2},
                    "status": {"replicas": 3, "readyReplicas": 3, "availableReplicas": 3},
                },
            ],
            0,
            dm.DeploymentCounts(4, 1, 4, 4, 0),
        ),
    ],
)
def test_deployment_counts(sets: list[dict], new: int, expected: dm.DeploymentCounts) -> None:
    assert dm.deployment_counts(all_sets=sets, new=sets[new]) == expected


def test_progress_and_completion() -> None:
    before = dm.DeploymentCounts(4, 1, 3, 3, 1)
    assert dm.made_progress(before, dm.DeploymentCounts(4, 2, 3, 3, 1))
    assert dm.made_progress(before, dm.DeploymentCounts(3, 1, 3, 3, 0))  # fewer old
    assert not dm.made_progress(before, before)
    assert dm.rollout_complete(dm.DeploymentCounts(3, 3, 3, 3, 0), 3)
    assert not dm.rollout_complete(dm.DeploymentCounts(4, 3, 4, 4, 0), 3)
