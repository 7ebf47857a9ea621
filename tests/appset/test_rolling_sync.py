"""Issue 15: RollingSync moves Applications step by step — Waiting, Pending (a sync
operation written), Progressing, Healthy — never past a step that is not Healthy, and at
most maxUpdate at a time within a step."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from headway.appset.generate import GeneratedApp, Generation
from headway.appset.plan import decide
from headway.appset.rolling_sync import disable_automated_sync

T0 = datetime(2026, 1, 2, 3, 0, 0, tzinfo=UTC)
STEPS = [
    {"matchExpressions": [{"key": "env", "operator": "In", "values": ["dev"]}]},
    {"matchExpressions": [{"key": "env", "operator": "In", "values": ["prod"]}], "maxUpdate": 1},
]
NAMES = {"dev-a": "dev", "prod-a": "prod", "prod-b": "prod"}


def _appset(status: dict[str, Any] | None = None) -> dict[str, Any]:
    spec = {
        "generators": [],
        "template": {},
        "strategy": {"type": "RollingSync", "rollingSync": {"steps": STEPS}},
    }
    return {
        "metadata": {"name": "set", "namespace": "argocd", "uid": "u"},
        "spec": spec,
        "status": status or {},
    }


def _desired(name: str, revision: str) -> dict[str, Any]:
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": name, "namespace": "argocd", "labels": {"env": NAMES[name]}},
        "spec": {
            "project": "default",
            "source": {"repoURL": "r", "path": "p", "targetRevision": revision},
            "destination": {"server": "https://kubernetes.default.svc"},
            "syncPolicy": {"automated": {"prune": True}},
        },
    }


class World:
    """Live Applications that follow what the plan writes; sync finishes when told."""

    def __init__(self, revision: str) -> None:
        self.apps: dict[str, dict[str, Any]] = {}
        self.appset = _appset()
        self.now = T0
        for name in NAMES:
            # created by the set earlier: automated sync already off
            self.apps[name] = self._synced(
                disable_automated_sync(_desired(name, revision)), revision
            )

    def _synced(self, app: dict[str, Any], revision: str) -> dict[str, Any]:
        spec = app["spec"]
        compared = {"source": spec["source"], "destination": spec["destination"]}
        app = {k: v for k, v in app.items() if k != "operation"}
        app["status"] = {
            "sync": {"status": "Synced", "revision": revision, "comparedTo": compared},
            "health": {"status": "Healthy"},
            "operationState": {"startedAt": self.now.strftime("%Y-%m-%dT%H:%M:%SZ")},
        }
        return app

    def reconcile(self, revision: str) -> set[str]:
        """One controller step; the names that got a sync operation."""
        self.now += timedelta(seconds=10)
        generation = Generation(tuple(GeneratedApp(n, _desired(n, revision), ()) for n in NAMES))
        plan = decide(self.appset, generation, list(self.apps.values()), invalid={}, now=self.now)
        synced = set()
        for update in plan.updates:
            name = update["metadata"]["name"]
            old_status = self.apps[name].get("status") or {}
            moved = update["spec"]["source"] != self.apps[name]["spec"]["source"]
            state = "OutOfSync" if moved else old_status["sync"]["status"]
            self.apps[name] = {
                **update,
                "status": {**old_status, "sync": {**old_status["sync"], "status": state}},
            }
            if "operation" in update:
                synced.add(name)
        self.appset = {**self.appset, "status": plan.status}
        return synced

    def finish_sync(self, name: str, revision: str) -> None:
        self.now += timedelta(seconds=1)
        self.apps[name] = self._synced(self.apps[name], revision)

    def states(self) -> dict[str, str]:
        return {s["application"]: s["status"] for s in self.appset["status"]["applicationStatus"]}


def test_steps_run_in_order_with_max_update() -> None:
    world = World("v1")
    world.reconcile("v1")
    assert set(world.states().values()) == {"Healthy"}  # already synced at v1
    assert world.reconcile("v2") == {"dev-a"}  # step 1 only
    assert world.states() == {"dev-a": "Pending", "prod-a": "Waiting", "prod-b": "Waiting"}
    assert world.reconcile("v2") == set()  # dev-a not done: prod waits
    world.finish_sync("dev-a", "v2")
    assert world.reconcile("v2") == {"prod-a"}  # maxUpdate 1 in step 2
    assert world.states()["dev-a"] == "Healthy"
    conditions = {c["type"]: c for c in world.appset["status"]["conditions"]}
    assert (
        conditions["RolloutProgressing"]["message"]
        == "ApplicationSet is performing rollout of step 2"
    )
    world.finish_sync("prod-a", "v2")
    assert world.reconcile("v2") == {"prod-b"}
    world.finish_sync("prod-b", "v2")
    world.reconcile("v2")
    assert world.states() == {"dev-a": "Healthy", "prod-a": "Healthy", "prod-b": "Healthy"}
    conditions = {c["type"]: c for c in world.appset["status"]["conditions"]}
    assert conditions["RolloutProgressing"]["status"] == "False"


def test_generated_applications_have_automated_sync_turned_off() -> None:
    world = World("v1")
    world.reconcile("v2")
    automated = world.apps["prod-a"]["spec"]["syncPolicy"]["automated"]
    assert automated == {"prune": True, "enabled": False}
    operation = world.apps["dev-a"]["operation"]
    assert operation["sync"]["prune"] is True
    assert operation["initiatedBy"] == {"username": "applicationset-controller", "automated": True}


def test_a_stale_synced_status_does_not_finish_a_step() -> None:
    """A path change keeps the revision; until the Application controller compares the new
    spec, the Application still reads Synced for the old one. Argo CD would mark the later
    steps Healthy at once; Headway waits for `comparedTo` to be the new spec."""
    world = World("v1")
    world.reconcile("v1")
    generation = Generation(
        tuple(GeneratedApp(n, _with_path(_desired(n, "v1"), "moved"), ()) for n in NAMES)
    )
    world.now += timedelta(seconds=10)
    plan = decide(world.appset, generation, list(world.apps.values()), invalid={}, now=world.now)
    for update in plan.updates:  # written; statuses untouched (not compared yet)
        world.apps[update["metadata"]["name"]] = {
            **update,
            "status": world.apps[update["metadata"]["name"]]["status"],
        }
    world.appset = {**world.appset, "status": plan.status}
    world.now += timedelta(seconds=10)
    plan = decide(world.appset, generation, list(world.apps.values()), invalid={}, now=world.now)
    states = {s["application"]: s["status"] for s in plan.status["applicationStatus"]}
    assert states["prod-a"] == states["prod-b"] == "Waiting"


def _with_path(app: dict[str, Any], path: str) -> dict[str, Any]:
    spec = {**app["spec"], "source": {**app["spec"]["source"], "path": path}}
    return {**app, "spec": spec}


def test_a_lost_sync_operation_is_written_again() -> None:
    """A new commit (same spec, new revision): dev-a becomes Pending and its sync operation
    is written; that write is lost. The next step writes it again."""
    world = World("v1")
    world.reconcile("v1")
    for name, app in world.apps.items():
        sync = {**app["status"]["sync"], "status": "OutOfSync", "revision": "r2"}
        world.apps[name] = {**app, "status": {**app["status"], "sync": sync}}
    world.now += timedelta(seconds=10)
    generation = Generation(tuple(GeneratedApp(n, _desired(n, "v1"), ()) for n in NAMES))
    plan = decide(world.appset, generation, list(world.apps.values()), invalid={}, now=world.now)
    assert [u["metadata"]["name"] for u in plan.updates] == ["dev-a"]
    world.appset = {**world.appset, "status": plan.status}  # the status is written, the app is not
    assert world.states()["dev-a"] == "Pending"
    assert world.reconcile("v1") == {"dev-a"}
