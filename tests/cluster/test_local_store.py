"""What the local store offers beyond the protocol: create, update, events, compaction."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from cluster.contract.objects import configmap, deployment
from headway.clock import VirtualClock
from headway.cluster.errors import (
    ClusterError,
    Conflict,
    Expired,
    FieldConflict,
    Invalid,
    NotFound,
)
from headway.cluster.events import events_for
from headway.cluster.local import LocalCluster
from headway.model.obj import Obj


@pytest.fixture
def store(tmp_path: Path, clock: VirtualClock) -> Iterator[LocalCluster]:
    with LocalCluster(tmp_path / "store.db", clock) as cluster:
        yield cluster


def test_create_refuses_an_existing_object(store: LocalCluster) -> None:
    store.create(configmap("a"))
    with pytest.raises(Conflict, match="already exists"):
        store.create(configmap("a"))


def test_generate_name(store: LocalCluster) -> None:
    obj: Obj = {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"generateName": "web-"}, "spec": {}}
    names = {store.create(obj)["metadata"]["name"] for _ in range(5)}
    assert len(names) == 5
    assert all(n.startswith("web-") and len(n) == len("web-") + 5 for n in names)
    with pytest.raises(Invalid, match=r"metadata\.name"):
        store.apply(obj, field_manager="test")  # apply needs a name


def test_update_checks_the_resource_version(store: LocalCluster) -> None:
    live = store.create(configmap("a", {"k": "1"}))
    live["data"] = {"k": "2"}
    updated = store.update(live, field_manager="ctl")
    assert updated["data"] == {"k": "2"}
    live["data"] = {"k": "3"}  # still carries the old resourceVersion
    with pytest.raises(Conflict, match="stale"):
        store.update(live, field_manager="ctl")
    with pytest.raises(NotFound):
        store.update(configmap("missing"))


def test_update_with_status_writes_both_in_one_preconditioned_write(
    store: LocalCluster,
) -> None:
    store.apply(deployment("web", replicas=2), field_manager="git")
    store.patch_status("apps/v1", "Deployment", "web", None, {"replicas": 2})
    live = store.get("apps/v1", "Deployment", "web")
    live["spec"]["replicas"] = 3
    live["status"] = {"replicas": 3}
    both = store.update(live, field_manager="ctl", with_status=True)
    assert (both["spec"]["replicas"], both["status"]) == (3, {"replicas": 3})
    assert int(both["metadata"]["resourceVersion"]) == int(live["metadata"]["resourceVersion"]) + 1
    live["status"] = {"replicas": 4}  # still carries the old resourceVersion
    with pytest.raises(Conflict, match="stale"):
        store.update(live, field_manager="ctl", with_status=True)
    assert store.get("apps/v1", "Deployment", "web")["status"] == {"replicas": 3}


def test_update_keeps_status_and_records_an_update_manager(store: LocalCluster) -> None:
    store.apply(deployment("web", replicas=2), field_manager="git")
    store.patch_status("apps/v1", "Deployment", "web", None, {"replicas": 2})
    live = store.get("apps/v1", "Deployment", "web")
    live["spec"]["replicas"] = 5
    live["status"] = {"replicas": 99}
    scaled = store.update(live, field_manager="hpa")
    assert scaled["status"] == {"replicas": 2}
    assert scaled["metadata"]["generation"] == 2
    operations = {m["manager"]: m["operation"] for m in scaled["metadata"]["managedFields"]}
    assert operations == {"git": "Apply", "hpa": "Update"}
    # The applier now conflicts with the updater over replicas, as in Kubernetes.
    with pytest.raises(FieldConflict) as caught:
        store.apply(deployment("web", replicas=2), field_manager="git")
    assert caught.value.conflicts == [(".spec.replicas", "hpa")]


def test_dry_run_create_stores_nothing(store: LocalCluster) -> None:
    preview = store.create(configmap("a"), dry_run=True)
    assert preview["metadata"]["name"] == "a"
    with pytest.raises(NotFound):
        store.get("v1", "ConfigMap", "a")


def test_watch_from_a_compacted_version_expires(store: LocalCluster) -> None:
    first = store.create(configmap("a"))
    for n in range(5):
        store.apply(configmap("a", {"n": str(n)}), field_manager="test")
    compacted = store.compact(keep=2)
    assert compacted == int(store.revision()) - 2
    with pytest.raises(Expired, match="too old"):
        list(store.watch("v1", "ConfigMap", resource_version=first["metadata"]["resourceVersion"]))
    recent = list(store.watch("v1", "ConfigMap", resource_version=str(compacted)))
    assert len(recent) == 2


def test_history_is_compacted_by_itself(tmp_path: Path, clock: VirtualClock) -> None:
    with LocalCluster(tmp_path / "small.db", clock, event_history=10) as store:
        first = store.create(configmap("a"))
        for n in range(30):
            store.apply(configmap("a", {"n": str(n)}), field_manager="test")
        with pytest.raises(Expired):
            next(store.watch("v1", "ConfigMap",
                             resource_version=first["metadata"]["resourceVersion"]))


def test_watch_rejects_a_malformed_version(store: LocalCluster) -> None:
    with pytest.raises(Invalid, match="resourceVersion"):
        next(store.watch("v1", "ConfigMap", resource_version="abc"))


def test_record_event_counts_repeats(store: LocalCluster, clock: VirtualClock) -> None:
    pod = store.create({"apiVersion": "v1", "kind": "Pod",
                        "metadata": {"name": "web-1"}, "spec": {}})
    first = store.record_event(pod, reason="Started", message="process 42 started")
    clock.advance(30)
    again = store.record_event(pod, reason="Started", message="process 42 started")
    other = store.record_event(pod, reason="Unhealthy", message="readiness probe failed",
                               event_type="Warning")
    assert again["metadata"]["name"] == first["metadata"]["name"]
    assert (again["count"], again["firstTimestamp"], again["lastTimestamp"]) == (
        2, "2026-01-01T00:00:00Z", "2026-01-01T00:00:30Z")
    assert again["involvedObject"] == {"apiVersion": "v1", "kind": "Pod", "name": "web-1",
                                       "namespace": "default",
                                       "uid": pod["metadata"]["uid"]}
    assert [e["reason"] for e in events_for(store, pod)] == ["Started", "Unhealthy"]
    assert other["type"] == "Warning"
    with pytest.raises(Invalid, match="Normal or Warning"):
        store.record_event(pod, reason="X", message="y", event_type="Bad")  # type: ignore[arg-type]


def test_deleting_a_namespace_deletes_its_objects(store: LocalCluster) -> None:
    store.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "prod"}},
                field_manager="test")
    store.apply(deployment("web", namespace="prod"), field_manager="test")
    store.apply(configmap("held", namespace="prod", finalizers=["example.com/x"]),
                field_manager="ctl")
    store.apply(configmap("elsewhere"), field_manager="test")
    store.delete("v1", "Namespace", "prod")
    namespace = store.get("v1", "Namespace", "prod")
    assert namespace["status"] == {"phase": "Terminating"}
    assert store.list("apps/v1", "Deployment", namespace="prod") == []
    with pytest.raises(Conflict, match="being terminated"):
        store.apply(configmap("new", namespace="prod"), field_manager="test")
    store.apply(configmap("held", namespace="prod"), field_manager="ctl")
    with pytest.raises(NotFound):
        store.get("v1", "Namespace", "prod")
    assert [o["metadata"]["name"] for o in store.list("v1", "ConfigMap")] == ["elsewhere"]


def test_a_file_that_is_not_a_store_is_a_cluster_error(tmp_path: Path,
                                                       clock: VirtualClock) -> None:
    bogus = tmp_path / "notes.txt"
    bogus.write_text("these are not the objects you are looking for\n" * 200)
    with pytest.raises(ClusterError, match=r"notes\.txt"):
        LocalCluster(bogus, clock)


def test_a_failed_write_leaves_nothing_behind(store: LocalCluster) -> None:
    before = store.revision()
    with pytest.raises(Invalid):
        store.apply(configmap("a", labels={"bad key": "x"}), field_manager="test")
    with pytest.raises(NotFound):
        store.apply(deployment("web", namespace="missing"), field_manager="test")
    assert store.revision() == before
    assert store.list("v1", "ConfigMap") == []


def test_list_with_revision_then_watch_misses_nothing(store: LocalCluster) -> None:
    store.apply(configmap("a"), field_manager="test")
    listed, revision = store.list_with_revision("v1", "ConfigMap")
    assert [o["metadata"]["name"] for o in listed] == ["a"]
    assert revision == listed[0]["metadata"]["resourceVersion"]
    store.apply(configmap("b"), field_manager="test")
    events = list(store.watch("v1", "ConfigMap", resource_version=revision))
    assert [e.object["metadata"]["name"] for e in events] == ["b"]


def test_one_store_shared_by_threads(store: LocalCluster) -> None:
    store.create(configmap("counter", {"n": "0"}))

    def bump(times: int) -> None:
        for _ in range(times):
            while True:
                live = store.get("v1", "ConfigMap", "counter")
                live["data"]["n"] = str(int(live["data"]["n"]) + 1)
                try:
                    store.update(live, field_manager="bumper")
                    break
                except Conflict:
                    continue

    threads = [threading.Thread(target=bump, args=(25,)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert store.get("v1", "ConfigMap", "counter")["data"] == {"n": "100"}


@pytest.mark.parametrize("part", ["spec", "status"])
def test_a_spec_or_status_that_is_not_a_mapping_is_refused(
    store: LocalCluster, part: str
) -> None:
    meta = {"name": "d", "namespace": "default"}
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta, part: 5}
    with pytest.raises(Invalid, match=rf"Deployment d: {part}: must be a mapping, got integer 5"):
        store.apply(deployment, field_manager="test")
    assert store.list("apps/v1", "Deployment") == []
