"""The Application controller compares under argocd-cm's diff customizations, as Argo CD does.

Before: the controller read only each Application's `spec.ignoreDifferences`: an argocd-cm
rule for `/spec/replicas` left every app whose replicas an autoscaler moved OutOfSync
forever, a malformed rule was dropped without a word, and a live object carrying
`compare-options: IgnoreExtraneous` kept its app OutOfSync.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from app_harness import (
    APPS_NS,
    Harness,
    application,
    apply_argocd_cm,
    config_map,
    deployment,
    make_harness,
    manifests,
)

from headway.clock import VirtualClock
from headway.cluster.errors import ClusterError
from headway.cluster.protocol import Cluster
from headway.controllers.app.diff_settings import (
    REREAD_SECONDS,
    SystemDiffReader,
    problem_lines,
    read_diff_customizations,
)

SYSTEM_RULE = "resource.customizations.ignoreDifferences.apps_Deployment"


def _sync_status(status: dict[str, Any]) -> str:
    return str((status.get("sync") or {}).get("status") or "")


def _scaled_by_an_autoscaler(h: Harness) -> None:
    live = h.get("Deployment", "web")
    live["spec"]["replicas"] = 4
    h.store.update(live, field_manager="kube-controller-manager")


def test_a_system_wide_rule_makes_the_app_synced_from_the_next_reading_of_argocd_cm(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(deployment("web"))})
    h.install(application("shop", h.remote.url, path="app", automated={}))
    h.run("shop", lambda s: _sync_status(s) == "Synced")
    _scaled_by_an_autoscaler(h)
    h.run("shop", lambda s: _sync_status(s) == "OutOfSync", steps=1)  # automated, no selfHeal
    apply_argocd_cm(h, {SYSTEM_RULE: "jsonPointers:\n- /spec/replicas\n"})
    clock.advance(REREAD_SECONDS)
    status = h.run("shop", lambda s: _sync_status(s) == "Synced", steps=1)
    assert h.get("Deployment", "web")["spec"]["replicas"] == 4
    assert not [c for c in status.get("conditions") or [] if "ignoreDifferences" in c["message"]]


def test_managed_fields_managers_in_argocd_cm_hand_a_field_to_its_writer(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(deployment("web"))})
    apply_argocd_cm(h, {"resource.customizations.ignoreDifferences.all":
                   "managedFieldsManagers:\n- kube-controller-manager\n"})  # fmt: skip
    h.install(application("shop", h.remote.url, path="app", automated={}))
    h.run("shop", lambda s: _sync_status(s) == "Synced")
    _scaled_by_an_autoscaler(h)  # the first test: OutOfSync without the rule
    comparison, errors = h.controller.compare("shop", APPS_NS)  # `headway app diff`'s
    assert errors == [] and comparison is not None
    assert comparison.sync_status == "Synced" and not any(comparison.modified.values())
    h.store.delete("v1", "ConfigMap", "argocd-cm", APPS_NS)
    clock.advance(REREAD_SECONDS)
    comparison, _ = h.controller.compare("shop", APPS_NS)
    assert comparison is not None and comparison.sync_status == "OutOfSync"


def test_a_malformed_argocd_cm_rule_stops_every_comparison_naming_its_key(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("settings"))})
    apply_argocd_cm(h, {SYSTEM_RULE: "jsonPointers:\n- spec/replicas\n"})
    h.install(application("shop", h.remote.url, path="app", automated={"prune": True}))
    status = h.run("shop", lambda s: bool(s.get("conditions")), steps=1)
    (condition,) = status["conditions"]
    assert condition["type"] == "ComparisonError"
    assert condition["message"].startswith(f"argocd-cm: {SYSTEM_RULE}: jsonPointers: ")
    assert _sync_status(status) == "Unknown"
    for _ in range(3):
        h.step("shop")
        clock.advance(60)
    assert not h.exists("ConfigMap", "settings")  # never synced against a guess


def test_serve_names_each_argocd_cm_problem_at_start(tmp_path: Path, clock: VirtualClock) -> None:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("settings"))})
    apply_argocd_cm(h, {SYSTEM_RULE: "jsonPointers: [spec/replicas]",
                   "resource.compareoptions": "ignoreResourceStatusField: crds"})  # fmt: skip
    assert problem_lines(read_diff_customizations(h.store)) == [
        f'argocd-cm: {SYSTEM_RULE}: jsonPointers: "spec/replicas" is not a JSON pointer '
        '(it must start with "/")',
        "argocd-cm: resource.compareoptions: warning: ignoreResourceStatusField: 'crds' is not "
        "all, crd or none; Argo CD then ignores the status of every resource, and so does Headway",
    ]


class _Unanswering:
    """The store, refusing reads of ConfigMaps while `down` (everything else passes)."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.down = False

    def get(self, api: str, kind: str, name: str, namespace: str | None = None) -> Any:
        if self.down and kind == "ConfigMap":
            raise ClusterError("the store did not answer")
        return self.store.get(api, kind, name, namespace)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)


def test_a_store_that_does_not_answer_never_drops_the_system_rules(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("settings"))})
    apply_argocd_cm(h, {SYSTEM_RULE: "jsonPointers: [/spec/replicas]"})
    store = _Unanswering(h.store)
    store.down = True
    first = SystemDiffReader(cast(Cluster, store), clock).current()
    assert first.error == "argocd-cm could not be read: the store did not answer"
    reader = SystemDiffReader(cast(Cluster, store), clock)
    store.down = False
    read = reader.current()
    assert read.error == "" and len(read.rules) == 1
    store.down = True
    clock.advance(REREAD_SECONDS)
    assert reader.current() is read  # the last reading, not Argo CD's defaults


def _extraneous(annotated: bool) -> dict[str, Any]:
    notes = {"argocd.argoproj.io/compare-options": "IgnoreExtraneous"} if annotated else {}
    return config_map("generated-1", **notes)


def _prune_pending(status: dict[str, Any]) -> bool:
    return any(r.get("requiresPruning") for r in status.get("resources") or [])


def test_ignore_extraneous_leaves_the_app_synced_and_the_resource_prunable(
    tmp_path: Path, clock: VirtualClock
) -> None:
    for annotated in (False, True):
        root = tmp_path / str(annotated)
        root.mkdir()
        files = {"app/all.yaml": manifests(config_map("keep"), _extraneous(annotated))}
        h = make_harness(root, clock, files)
        h.install(application("shop", h.remote.url, path="app", automated={}))
        h.run("shop", lambda s: _sync_status(s) == "Synced")
        h.remote.commit({"app/all.yaml": manifests(config_map("keep"))})
        h.reader.mark_changed(h.remote.url)
        clock.advance(1)
        status = h.run("shop", _prune_pending, steps=2)
        (generated,) = [r for r in status["resources"] if r["name"] == "generated-1"]
        assert (generated["status"], generated.get("requiresPruning")) == ("OutOfSync", True)
        assert _sync_status(status) == ("Synced" if annotated else "OutOfSync")
        assert h.exists("ConfigMap", "generated-1")  # automated prune is off: nothing deleted
