"""The Deployment, ReplicaSet and Job controllers as step functions on a virtual clock.

No processes here: a fake kubelet marks pods ready, succeeded or failed, so each test
asserts exact replica counts after each step and exact virtual times for deadlines.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cluster.local_runtime.harness import deployment
from cluster.store_bypass import force_field
from headway.clock import VirtualClock
from headway.cluster.local.api.store import LocalCluster
from headway.cluster.local.kubelet.images import BackoffConfig
from headway.cluster.local.workloads import daemonsets, deployments, jobs, replicasets, statefulsets
from headway.kubetime import format_time
from headway.model.obj import Obj


@pytest.fixture
def cluster(tmp_path: Path, clock: VirtualClock) -> Iterator[LocalCluster]:
    with LocalCluster(tmp_path / "cluster.db", clock) as store:
        yield store


def step(cluster: LocalCluster, clock: VirtualClock) -> None:
    deployments.sync_deployments(cluster, clock)
    replicasets.sync_replica_sets(cluster, clock)


def mark_pods(
    cluster: LocalCluster,
    clock: VirtualClock,
    *,
    phase: str = "Running",
    ready: bool = True,
    only_unmarked: bool = False,
) -> None:
    """The fake kubelet: give every pod a status."""
    for pod in cluster.list("v1", "Pod"):
        if only_unmarked and pod.get("status"):
            continue
        stamp = format_time(clock.now())
        status: dict[str, Any] = {
            "phase": phase,
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True" if ready else "False",
                    "lastTransitionTime": stamp,
                }
            ],
        }
        if phase in ("Succeeded", "Failed"):
            code = 0 if phase == "Succeeded" else 1
            status["containerStatuses"] = [
                {
                    "name": "task",
                    "restartCount": 0,
                    "state": {"terminated": {"exitCode": code, "finishedAt": stamp}},
                }
            ]
        cluster.patch_status("v1", "Pod", pod["metadata"]["name"], "default", status)


def replica_counts(cluster: LocalCluster) -> dict[str, int]:
    return {
        rs["metadata"]["annotations"][deployments.REVISION_ANNOTATION]: rs["spec"]["replicas"]
        for rs in cluster.list("apps/v1", "ReplicaSet")
    }


def d_status(cluster: LocalCluster, name: str = "web") -> Obj:
    return cluster.get("apps/v1", "Deployment", name, "default")["status"]


def conditions(status: Obj) -> dict[str, tuple[str, str]]:
    return {c["type"]: (c["status"], c["reason"]) for c in status["conditions"]}


def test_a_deployment_makes_a_replica_set_which_makes_pods(
    cluster: LocalCluster, clock: VirtualClock
) -> None:
    created = cluster.apply(deployment("web", "demo:v1", replicas=3), field_manager="test")
    step(cluster, clock)
    (rs,) = cluster.list("apps/v1", "ReplicaSet")
    assert rs["metadata"]["ownerReferences"][0]["uid"] == created["metadata"]["uid"]
    template_hash = rs["metadata"]["labels"]["pod-template-hash"]
    assert rs["metadata"]["name"] == f"web-{template_hash}"
    assert rs["spec"]["selector"]["matchLabels"] == {
        "app": "web",
        "pod-template-hash": template_hash,
    }
    pods = cluster.list("v1", "Pod")
    assert len(pods) == 3
    assert all(p["metadata"]["ownerReferences"][0]["name"] == rs["metadata"]["name"] for p in pods)
    assert conditions(d_status(cluster))["Progressing"] == ("True", "NewReplicaSetCreated")
    mark_pods(cluster, clock)
    step(cluster, clock)
    step(cluster, clock)
    status = d_status(cluster)
    assert (status["replicas"], status["readyReplicas"], status["availableReplicas"]) == (3, 3, 3)
    assert conditions(status) == {
        "Available": ("True", "MinimumReplicasAvailable"),
        "Progressing": ("True", "NewReplicaSetAvailable"),
    }


def test_rolling_update_moves_one_pod_at_a_time(cluster: LocalCluster, clock: VirtualClock) -> None:
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
    cluster.apply(deployment("web", "demo:v1", replicas=3, strategy=strategy), field_manager="test")
    step(cluster, clock)
    mark_pods(cluster, clock)
    step(cluster, clock)
    cluster.apply(deployment("web", "demo:v2", replicas=3, strategy=strategy), field_manager="test")
    history = []
    for _ in range(12):
        step(cluster, clock)
        history.append(tuple(sorted(replica_counts(cluster).items())))
        mark_pods(cluster, clock, only_unmarked=True)  # new pods become ready a moment later
        clock.advance(1)
    distinct = list(dict.fromkeys(history))
    assert distinct == [
        (("1", 3), ("2", 1)),
        (("1", 2), ("2", 1)),
        (("1", 2), ("2", 2)),
        (("1", 1), ("2", 2)),
        (("1", 1), ("2", 3)),
        (("1", 0), ("2", 3)),
    ]
    assert conditions(d_status(cluster))["Progressing"] == ("True", "NewReplicaSetAvailable")


def test_rolling_back_to_an_old_template_reuses_its_replica_set(
    cluster: LocalCluster, clock: VirtualClock
) -> None:
    for image in ("demo:v1", "demo:v2", "demo:v1"):
        cluster.apply(deployment("web", image, replicas=1), field_manager="test")
        for _ in range(6):
            step(cluster, clock)
            mark_pods(cluster, clock, only_unmarked=True)
    assert len(cluster.list("apps/v1", "ReplicaSet")) == 2
    assert replica_counts(cluster) == {"3": 1, "2": 0}  # v1's ReplicaSet, now revision 3


def test_progress_deadline_is_exceeded_at_exactly_its_time(
    cluster: LocalCluster, clock: VirtualClock
) -> None:
    manifest = deployment("web", "demo:v1", replicas=2)
    manifest["spec"]["progressDeadlineSeconds"] = 30
    cluster.apply(manifest, field_manager="test")
    step(cluster, clock)
    mark_pods(cluster, clock, ready=False)
    step(cluster, clock)
    clock.advance(29)
    step(cluster, clock)
    assert conditions(d_status(cluster))["Progressing"][0] == "True"
    clock.advance(1)
    step(cluster, clock)
    status = d_status(cluster)
    assert conditions(status)["Progressing"] == ("False", "ProgressDeadlineExceeded")
    assert conditions(status)["Available"] == ("False", "MinimumReplicasUnavailable")


def test_min_ready_seconds_delays_availability(cluster: LocalCluster, clock: VirtualClock) -> None:
    manifest = deployment("web", "demo:v1", replicas=1)
    manifest["spec"]["minReadySeconds"] = 10
    cluster.apply(manifest, field_manager="test")
    step(cluster, clock)
    mark_pods(cluster, clock)
    (rs,) = cluster.list("apps/v1", "ReplicaSet")
    assert replicasets.reconcile_replica_set(cluster, clock, rs) == 10  # requeue when it will count
    clock.advance(9)
    step(cluster, clock)
    assert cluster.list("apps/v1", "ReplicaSet")[0]["status"]["availableReplicas"] == 0
    clock.advance(1)
    step(cluster, clock)
    assert cluster.list("apps/v1", "ReplicaSet")[0]["status"]["availableReplicas"] == 1


@pytest.mark.parametrize(("kind", "sync"), [("StatefulSet", statefulsets.sync_stateful_sets),
                                            ("DaemonSet", daemonsets.sync_daemon_sets)])
def test_min_ready_seconds_asks_for_a_look_when_the_pod_will_count(
    cluster: LocalCluster, clock: VirtualClock, kind: str, sync: Any
) -> None:
    """The runtime steps only when asked: a set counting available Pods asks for the moment
    its ready Pod has been ready for `minReadySeconds` (else it would read 0 until a resync)."""
    manifest = deployment("web", "demo:v1", replicas=1)
    manifest["kind"] = kind
    manifest["spec"]["minReadySeconds"] = 10
    for key in ("strategy", *(("replicas",) if kind == "DaemonSet" else ())):
        manifest["spec"].pop(key)
    cluster.apply(manifest, field_manager="test")
    sync(cluster, clock)
    mark_pods(cluster, clock)
    assert sync(cluster, clock) == 10
    clock.advance(4)
    assert sync(cluster, clock) == 6
    clock.advance(6)
    assert sync(cluster, clock) is None
    status = cluster.get("apps/v1", kind, "web", "default")["status"]
    assert status.get("availableReplicas", status.get("numberAvailable")) == 1


def test_recreate_waits_for_old_pods_to_be_gone(cluster: LocalCluster, clock: VirtualClock) -> None:
    strategy = {"type": "Recreate"}
    cluster.apply(deployment("web", "demo:v1", replicas=2, strategy=strategy), field_manager="test")
    step(cluster, clock)
    mark_pods(cluster, clock)
    cluster.apply(deployment("web", "demo:v2", replicas=2, strategy=strategy), field_manager="test")
    step(cluster, clock)
    assert replica_counts(cluster) == {"1": 2, "2": 0}
    step(cluster, clock)  # old scaled to 0; the ReplicaSet controller deletes its pods
    assert replica_counts(cluster) == {"1": 0, "2": 0}
    step(cluster, clock)
    assert replica_counts(cluster) == {"1": 0, "2": 2}


def test_replica_set_scales_down_unready_pods_first_for_any_owner(
    cluster: LocalCluster, clock: VirtualClock
) -> None:
    owner = cluster.apply(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "some-owner", "namespace": "default"},
        },
        field_manager="test",
    )
    rs = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": "rs",
            "namespace": "default",
            "ownerReferences": [replicasets.owner_reference(owner)],
        },
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "x"}},
            "template": {
                "metadata": {"labels": {"app": "x"}},
                "spec": {"containers": [{"name": "c", "image": "demo:v1"}]},
            },
        },
    }
    cluster.apply(rs, field_manager="test")
    replicasets.sync_replica_sets(cluster, clock)
    mark_pods(cluster, clock)
    unready = cluster.list("v1", "Pod")[1]["metadata"]["name"]
    cluster.patch_status(
        "v1",
        "Pod",
        unready,
        "default",
        {"phase": "Running", "conditions": [{"type": "Ready", "status": "False"}]},
    )
    rs["spec"]["replicas"] = 2
    cluster.apply(rs, field_manager="test")
    replicasets.sync_replica_sets(cluster, clock)
    names = [p["metadata"]["name"] for p in cluster.list("v1", "Pod")]
    assert len(names) == 2 and unready not in names


def _job(name: str, **spec: Any) -> Obj:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            **spec,
            "template": {
                "spec": {"restartPolicy": "Never", "containers": [{"name": "task", "image": "t:1"}]}
            },
        },
    }


def test_job_waits_its_back_off_between_failed_pods(
    cluster: LocalCluster, clock: VirtualClock
) -> None:
    cluster.apply(_job("j", backoffLimit=3), field_manager="test")
    backoff = BackoffConfig(initial_seconds=10, max_seconds=360)
    jobs.sync_jobs(cluster, clock, backoff=backoff)
    mark_pods(cluster, clock, phase="Failed", ready=False)
    wait = jobs.sync_jobs(cluster, clock, backoff=backoff)
    assert wait == 10 and len(cluster.list("v1", "Pod")) == 1
    clock.advance(10)
    jobs.sync_jobs(cluster, clock, backoff=backoff)
    assert len(cluster.list("v1", "Pod")) == 2
    mark_pods(cluster, clock, phase="Failed", ready=False, only_unmarked=True)
    assert jobs.sync_jobs(cluster, clock, backoff=backoff) == 20  # doubled


def test_job_deadline_is_exact(cluster: LocalCluster, clock: VirtualClock) -> None:
    cluster.apply(_job("j", activeDeadlineSeconds=60), field_manager="test")
    backoff = BackoffConfig()
    assert jobs.sync_jobs(cluster, clock, backoff=backoff) == 60
    clock.advance(59)
    jobs.sync_jobs(cluster, clock, backoff=backoff)
    assert "conditions" not in cluster.get("batch/v1", "Job", "j", "default")["status"]
    clock.advance(1)
    jobs.sync_jobs(cluster, clock, backoff=backoff)
    status = cluster.get("batch/v1", "Job", "j", "default")["status"]
    assert [(c["type"], c["reason"]) for c in status["conditions"]] == [
        ("Failed", "DeadlineExceeded")
    ]
    assert cluster.list("v1", "Pod") == []


def test_a_malformed_deployment_does_not_stop_the_others(
    cluster: LocalCluster, clock: VirtualClock
) -> None:
    cluster.apply(deployment("broken", "demo:v1"), field_manager="test")
    force_field(cluster.path, kind="Deployment", name="broken", path="$.spec.replicas",
                value="many")
    cluster.apply(deployment("fine", "demo:v1", replicas=1), field_manager="test")
    step(cluster, clock)
    assert [
        rs["metadata"]["name"].split("-")[0] for rs in cluster.list("apps/v1", "ReplicaSet")
    ] == ["fine"]
    (event,) = [e for e in cluster.list("v1", "Event") if e["reason"] == "ReconcileError"]
    assert event["involvedObject"]["name"] == "broken" and event["type"] == "Warning"
    assert "many" in event["message"]


def test_a_paused_deployment_starts_no_new_revision(
    cluster: LocalCluster, clock: VirtualClock
) -> None:
    cluster.apply(deployment("web", "demo:v1", replicas=1), field_manager="test")
    step(cluster, clock)
    paused = deployment("web", "demo:v2", replicas=1)
    paused["spec"]["paused"] = True
    cluster.apply(paused, field_manager="test")
    step(cluster, clock)
    assert replica_counts(cluster) == {"1": 1}
    paused["spec"]["paused"] = False
    cluster.apply(paused, field_manager="test")
    step(cluster, clock)
    assert replica_counts(cluster) == {"1": 1, "2": 1}


@pytest.mark.parametrize(
    ("spec", "succeeded", "failed", "running", "verdict"),
    [
        ({}, 0, 0, 0, None),
        ({}, 1, 0, 0, ("Complete", "", "")),
        ({"completions": 3}, 2, 0, 0, None),
        ({}, 0, 6, 0, None),  # backoffLimit 6: the 7th failure ends it
        (
            {},
            0,
            7,
            0,
            ("Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit"),
        ),
        (
            {"backoffLimit": 0},
            0,
            1,
            0,
            ("Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit"),
        ),
        ({"activeDeadlineSeconds": 30}, 0, 0, 29.9, None),
        (
            {"activeDeadlineSeconds": 30},
            0,
            0,
            30,
            ("Failed", "DeadlineExceeded", "Job was active longer than specified deadline"),
        ),
        # failures are judged before success, as the Job controller does
        (
            {"backoffLimit": 0},
            1,
            1,
            0,
            ("Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit"),
        ),
    ],
)
def test_job_verdict(
    spec: dict[str, Any],
    succeeded: int,
    failed: int,
    running: float,
    verdict: tuple[str, str, str] | None,
) -> None:
    tally = jobs.JobTally(active=[], succeeded=succeeded, failed=failed)
    assert jobs.job_verdict(spec, tally, running_seconds=running) == verdict
