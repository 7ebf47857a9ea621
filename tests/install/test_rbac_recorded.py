"""Issue 11: a Rollout walked through an analysis step and aborted by a failed run, and two
replicas electing a leader, with every cluster call recorded as the RBAC verb and resource it
needs on a real API: each one must be in the engine's access table (and so in the install's
ClusterRole)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest

from controllers.rollout_harness import Harness, rollout, template
from headway.clock import VirtualClock
from headway.cluster.errors import NotFound
from headway.cluster.local import LocalCluster
from headway.cluster.protocol import Cluster
from headway.controllers.lease_lock import LeaseLock
from headway.controllers.rollout.controller import RolloutController
from headway.engine.access import REQUIRED_ACCESS
from headway.state_lock import LockHeld

STEPS = [
    {"setWeight": 25},
    {"analysis": {"templates": [{"templateName": "errors"}],
                  "args": [{"name": "canary-hash",
                            "valueFrom": {"podTemplateHashValue": "Latest"}}]}},
    {"setWeight": 50},
]


class RecordingCluster:
    """The store, with each call noted as (verb, apiVersion, kind, subresource)."""

    def __init__(self, store: LocalCluster) -> None:
        self._store = store
        self.calls: set[tuple[str, str, str, str]] = set()

    def _note(self, verb: str, api_version: str, kind: str, sub: str = "") -> None:
        self.calls.add((verb, api_version, kind, sub))

    def get(self, api_version: str, kind: str, *args: Any, **kw: Any) -> Any:
        self._note("get", api_version, kind)
        return self._store.get(api_version, kind, *args, **kw)

    def list(self, api_version: str, kind: str, *args: Any, **kw: Any) -> Any:
        self._note("list", api_version, kind)
        return self._store.list(api_version, kind, *args, **kw)

    def apply(self, obj: Any, **kw: Any) -> Any:
        meta = obj["metadata"]
        try:
            self._store.get(obj["apiVersion"], obj["kind"], meta["name"], meta.get("namespace"))
        except NotFound:
            self._note("create", obj["apiVersion"], obj["kind"])
        self._note("patch", obj["apiVersion"], obj["kind"])
        return self._store.apply(obj, **kw)

    def update(self, obj: Any, **kw: Any) -> Any:
        self._note("update", obj["apiVersion"], obj["kind"])
        return self._store.update(obj, **kw)

    def patch_status(self, api_version: str, kind: str, *args: Any, **kw: Any) -> Any:
        self._note("update", api_version, kind, "status")
        return self._store.patch_status(api_version, kind, *args, **kw)

    def delete(self, api_version: str, kind: str, *args: Any, **kw: Any) -> Any:
        self._note("delete", api_version, kind)
        return self._store.delete(api_version, kind, *args, **kw)

    def __getattr__(self, name: str) -> Any:  # discovery, watch...: no object access
        return getattr(self._store, name)


def _granted(verb: str, api_version: str, kind: str, sub: str) -> bool:
    return any(
        e.api_version.partition("/")[0] == api_version.partition("/")[0] and e.kind == kind
        and e.resource.partition("/")[2] == sub and verb in e.verbs
        for e in REQUIRED_ACCESS
    )


def test_a_canary_with_analysis_and_abort_needs_only_granted_access(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = Harness(tmp_path, clock)
    recorder = RecordingCluster(h.cluster)
    h.controller = RolloutController(cast(Cluster, recorder), clock)
    h.apply(template("errors", args=[{"name": "canary-hash"}]))
    h.apply(rollout(canary={"steps": STEPS}))
    h.settle()
    clock.advance(5)
    h.apply(rollout(image="app:v2", canary={"steps": STEPS}))
    h.settle()
    [run] = h.runs()
    h.set_run_phase(run["metadata"]["name"], "Failed", "error ratio 0.3 > 0.05")
    h.settle()
    assert h.status()["abort"] is True  # the scenario reached the abort it is about
    touched = {(api, kind) for _, api, kind, _ in recorder.calls}
    assert {("apps/v1", "ReplicaSet"), ("argoproj.io/v1alpha1", "AnalysisRun")} <= touched
    missing = sorted(c for c in recorder.calls if not _granted(*c))
    assert not missing, f"not in REQUIRED_ACCESS: {missing}"


def test_leader_election_needs_only_granted_access(tmp_path: Path, clock: VirtualClock) -> None:
    """Two replicas: one creates the Lease and renews it, the other waits, then takes it over
    after the holder released it."""
    with LocalCluster(tmp_path / "leases.db", clock) as store:
        store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "argocd"}})
        recorder = RecordingCluster(store)
        leader = LeaseLock(cast(Cluster, recorder), clock, identity="a")
        standby = LeaseLock(cast(Cluster, recorder), clock, identity="b")
        leader.acquire()
        clock.advance(2)
        assert leader.renew()
        with pytest.raises(LockHeld):
            standby.acquire()
        leader.release()
        standby.acquire()
    assert {verb for verb, _, kind, _ in recorder.calls if kind == "Lease"} >= {
        "get", "create", "update"}
    missing = sorted(c for c in recorder.calls if not _granted(*c))
    assert not missing, f"not in REQUIRED_ACCESS: {missing}"


def test_an_experiment_template_service_needs_only_granted_access(
    tmp_path: Path, clock: VirtualClock
) -> None:
    """The Experiment controller creates a template's Service (`service`, as a weighted
    template gets) and deletes it once the experiment's pods are gone."""
    from headway.controllers.manager import ObjectKey
    from headway.controllers.rollout.experiments import ExperimentController

    h = Harness(tmp_path, clock)
    recorder = RecordingCluster(h.cluster)
    experiments = ExperimentController(cast(Cluster, recorder), clock)
    step = {"experiment": {"duration": "10s", "scaleDownDelaySeconds": 0, "templates": [
        {"name": "canary", "specRef": "canary", "service": {}}]}}
    ported = rollout(canary={"steps": [step]})
    ported["spec"]["template"]["spec"]["containers"][0]["ports"] = [{"containerPort": 8080}]
    h.apply(ported)
    h.settle()
    ported["spec"]["template"]["spec"]["containers"][0]["image"] = "app:v2"
    h.apply(ported)
    for _ in range(6):  # the rollout creates it, then its ReplicaSet, Service and pods come up
        h.settle()
        for exp in h.cluster.list("argoproj.io/v1alpha1", "Experiment", namespace="default"):
            experiments.step(ObjectKey("default", exp["metadata"]["name"]))
        h.kubelet()
        clock.advance(5)
    verbs = {verb for verb, _, kind, _ in recorder.calls if kind == "Service"}
    assert {"create", "delete"} <= verbs  # the scenario made and removed a template Service
    missing = sorted(c for c in recorder.calls if not _granted(*c))
    assert not missing, f"not in REQUIRED_ACCESS: {missing}"
