"""Sync options and manual operations over the store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app_harness import (
    APPS_NS,
    application,
    config_map,
    hook_job,
    make_harness,
    manifests,
    message,
    phase,
    request_sync,
)

from headway.clock import VirtualClock
from headway.sync.comparison import TRACKING_ANNOTATION


def _done(s: dict[str, Any]) -> bool:
    return phase(s) in ("Succeeded", "Failed")


CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {
        "group": "example.com",
        "names": {"kind": "Widget", "plural": "widgets"},
        "scope": "Namespaced",
        "versions": [{"name": "v1", "served": True, "storage": True}],
    },
}
WIDGET = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {}}


def test_a_custom_resource_with_its_crd_in_the_same_sync_skips_the_dry_run(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(WIDGET, CRD)})
    h.install(application("shop", h.remote.url, path="app", automated={}))
    status = h.run("shop", _done)
    assert phase(status) == "Succeeded", message(status)
    assert h.store.get("example.com/v1", "Widget", "w", "demo")["spec"] == {}


def test_an_unknown_kind_fails_the_dry_run_and_nothing_is_applied(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(WIDGET, config_map("a"))})
    h.install(application("shop", h.remote.url, path="app", automated={}))
    status = h.run("shop", _done)
    assert phase(status) == "Failed"
    assert message(status).startswith("one or more objects failed to apply (dry run): Widget/w")
    assert not h.exists("ConfigMap", "a")


def test_create_namespace(tmp_path: Path, clock: VirtualClock) -> None:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("a"))})
    app = application(
        "shop", h.remote.url, path="app", namespace="fresh", options=("CreateNamespace=true",)
    )
    app["spec"]["syncPolicy"]["automated"] = {}
    app["spec"]["syncPolicy"]["managedNamespaceMetadata"] = {"labels": {"team": "shop"}}
    h.install(app)
    status = h.run("shop", _done)
    assert phase(status) == "Succeeded", message(status)
    assert h.exists("ConfigMap", "a", "fresh")
    namespace = h.store.get("v1", "Namespace", "fresh")
    assert namespace["metadata"]["labels"]["team"] == "shop"


def test_fail_on_shared_resource(tmp_path: Path, clock: VirtualClock) -> None:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("shared"))})
    owned = config_map("shared")
    owned["metadata"] = {
        "name": "shared",
        "namespace": "demo",
        "annotations": {TRACKING_ANNOTATION: "other:/ConfigMap:demo/shared"},
    }
    h.store.apply(owned, field_manager="other")
    h.install(
        application(
            "shop", h.remote.url, path="app", automated={}, options=("FailOnSharedResource=true",)
        )
    )
    status = h.run("shop", _done)
    assert phase(status) == "Failed"
    assert "ConfigMap/demo/shared is already managed by application other" in message(status)
    assert any(c["type"] == "SharedResourceWarning" for c in status["conditions"])


def test_project_namespace_blacklist_refuses_a_kind(tmp_path: Path, clock: VirtualClock) -> None:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("a"))})
    h.store.apply(
        {
            "apiVersion": "argoproj.io/v1alpha1",
            "kind": "AppProject",
            "metadata": {"name": "default", "namespace": APPS_NS},
            "spec": {
                "sourceRepos": ["*"],
                "destinations": [{"server": "*", "namespace": "*"}],
                "namespaceResourceBlacklist": [{"group": "", "kind": "ConfigMap"}],
            },
        },
        field_manager="admin",
    )
    h.install(application("shop", h.remote.url, path="app", automated={}))
    status = h.run("shop", _done)
    assert phase(status) == "Failed"
    assert "kind is in namespaceResourceBlacklist" in message(status)


def test_selective_sync_applies_only_the_named_resource_without_hooks(
    tmp_path: Path, clock: VirtualClock
) -> None:
    files = {"app/all.yaml": manifests(config_map("a"), config_map("b"), hook_job("m", "PreSync"))}
    h = make_harness(tmp_path, clock, files)
    h.install(application("shop", h.remote.url, path="app"))
    request_sync(h, "shop", resources=[{"group": "", "kind": "ConfigMap", "name": "b"}])
    status = h.run("shop", _done)
    assert phase(status) == "Succeeded"
    assert (h.exists("ConfigMap", "a"), h.exists("ConfigMap", "b"), h.exists("Job", "m")) == (
        False,
        True,
        False,
    )
    assert status["history"][-1]["resources"] == [{"group": "", "kind": "ConfigMap", "name": "b"}]


def test_manual_dry_run_applies_nothing(tmp_path: Path, clock: VirtualClock) -> None:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("a"))})
    h.install(application("shop", h.remote.url, path="app"))
    request_sync(h, "shop", dryRun=True)
    status = h.run("shop", _done)
    assert message(status) == "dry run succeeded; nothing applied"
    assert not h.exists("ConfigMap", "a")
    assert status["history"][-1]["dryRun"] is True


def test_apply_out_of_sync_only_leaves_synced_resources_alone(
    tmp_path: Path, clock: VirtualClock
) -> None:
    files = {"app/all.yaml": manifests(config_map("a"), config_map("b"))}
    h = make_harness(tmp_path, clock, files)
    h.install(
        application(
            "shop", h.remote.url, path="app", automated={}, options=("ApplyOutOfSyncOnly=true",)
        )
    )
    h.run("shop", lambda s: phase(s) == "Succeeded")
    version_a = h.get("ConfigMap", "a")["metadata"]["resourceVersion"]
    h.remote.commit(
        {"app/all.yaml": manifests(config_map("a"), {**config_map("b"), "data": {"k": "2"}})}
    )
    h.reader.mark_changed(h.remote.url)
    clock.advance(1)
    status = h.run("shop", lambda s: len(s.get("history") or []) == 2)
    names = [r["name"] for r in status["operationState"]["syncResult"]["resources"]]
    assert names == ["b"]
    assert h.get("ConfigMap", "a")["metadata"]["resourceVersion"] == version_a


def test_respect_ignore_differences_keeps_the_live_value(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("a"))})
    app = application(
        "shop",
        h.remote.url,
        path="app",
        automated={"selfHeal": True},
        options=("RespectIgnoreDifferences=true",),
    )
    app["spec"]["ignoreDifferences"] = [
        {"group": "", "kind": "ConfigMap", "jsonPointers": ["/data"]}
    ]
    h.install(app)
    h.run("shop", lambda s: phase(s) == "Succeeded")
    live = h.get("ConfigMap", "a")
    h.store.update({**live, "data": {"k": "tuned"}}, field_manager="operator")
    h.remote.commit(
        {
            "app/all.yaml": manifests(
                {**config_map("a"), "metadata": {"name": "a", "labels": {"x": "1"}}}
            )
        }
    )
    h.reader.mark_changed(h.remote.url)
    clock.advance(1)
    h.run("shop", lambda s: len(s.get("history") or []) == 2)
    live = h.get("ConfigMap", "a")
    assert live["data"] == {"k": "tuned"}
    assert live["metadata"]["labels"]["x"] == "1"


def test_replace_writes_the_whole_object(tmp_path: Path, clock: VirtualClock) -> None:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("a"))})
    h.install(
        application("shop", h.remote.url, path="app", automated={}, options=("Replace=true",))
    )
    h.run("shop", lambda s: phase(s) == "Succeeded")
    h.remote.commit({"app/all.yaml": manifests({**config_map("a"), "data": {"k": "2"}})})
    h.reader.mark_changed(h.remote.url)
    clock.advance(1)
    status = h.run("shop", lambda s: len(s.get("history") or []) == 2)
    assert h.get("ConfigMap", "a")["data"] == {"k": "2"}
    assert (
        status["operationState"]["syncResult"]["resources"][0]["message"] == "configmap/a replaced"
    )


def test_an_ignore_differences_entry_that_matches_nothing_is_a_warning_condition(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("a"))})
    app = application("shop", h.remote.url, path="app")
    app["spec"]["ignoreDifferences"] = [{"kind": "Deployment", "jsonPointers": ["/spec/replicas"]}]
    h.install(app)
    h.step("shop")
    warnings = [
        c for c in h.status("shop")["conditions"] if c["type"] == "IgnoreDifferencesWarning"
    ]
    assert len(warnings) == 1
    assert "did you forget group?" in warnings[0]["message"]


def test_manual_sync_with_retry_limit_retries_inside_the_operation(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(config_map("a"))})
    h.install(application("shop", h.remote.url, path="app", namespace="later"))
    request_sync(h, "shop", prune=False)
    app = h.app("shop")
    operation = {**app["operation"], "retry": {"limit": 2, "backoff": {"duration": "10s"}}}
    h.store.apply(
        {
            "apiVersion": app["apiVersion"],
            "kind": "Application",
            "metadata": {"name": "shop", "namespace": APPS_NS},
            "operation": operation,
        },
        field_manager="cli",
    )
    status = h.run("shop", lambda s: "Retrying attempt #1" in message(s))
    assert phase(status) == "Running" and "namespace 'later' not found" in message(status)
    clock.advance(5)
    h.step("shop")
    assert h.operation("shop")["retryCount"] == 1 and not h.exists("ConfigMap", "a", "later")
    h.store.apply(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "later"}},
        field_manager="admin",
    )
    clock.advance(5)
    status = h.run("shop", lambda s: phase(s) == "Succeeded")
    assert status["operationState"]["retryCount"] == 1
    assert [e["phase"] for e in status["history"]] == ["Succeeded"]


def test_a_cluster_scoped_custom_kind_gets_no_namespace(
    tmp_path: Path, clock: VirtualClock
) -> None:
    crd = {
        **CRD,
        "metadata": {"name": "clusterwidgets.example.com"},
        "spec": {
            **CRD["spec"],
            "names": {"kind": "ClusterWidget", "plural": "clusterwidgets"},
            "scope": "Cluster",
        },
    }
    widget = {"apiVersion": "example.com/v1", "kind": "ClusterWidget", "metadata": {"name": "cw"}}
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(widget, crd)})
    h.install(application("shop", h.remote.url, path="app", automated={}))
    status = h.run("shop", _done)
    assert phase(status) == "Succeeded", message(status)
    assert "namespace" not in h.store.get("example.com/v1", "ClusterWidget", "cw")["metadata"]
    status = h.run("shop", lambda s: s["sync"]["status"] == "Synced")
    assert {r["kind"]: r["namespace"] for r in status["resources"]}["ClusterWidget"] == ""


def test_a_running_operation_whose_sources_cannot_render_ends_in_error(
    tmp_path: Path, clock: VirtualClock
) -> None:
    h = make_harness(tmp_path, clock, {"app/all.yaml": manifests(hook_job("m", "PreSync"))})
    h.install(application("shop", h.remote.url, path="app"))
    request_sync(h, "shop", revision="0" * 40)  # a commit that does not exist
    status = h.run("shop", lambda s: phase(s) in ("Error", "Failed", "Succeeded"))
    assert phase(status) == "Error"
    assert message(status).startswith("ComparisonError:")
    assert status["history"][-1]["phase"] == "Error"


def test_an_unknown_field_fails_the_sync_unless_validate_is_false(
    tmp_path: Path, clock: VirtualClock
) -> None:
    typo = config_map("a")
    typo["dta"] = {"k": "v"}  # a misspelt `data`: the API server refuses it under Strict
    files = {"app/all.yaml": manifests(typo)}
    h = make_harness(tmp_path, clock, files)
    h.install(application("strict", h.remote.url, path="app", automated={}))
    status = h.run("strict", lambda s: phase(s) in ("Failed", "Error"))
    assert message(status).endswith("(dry run): ConfigMap/a: ConfigMap a: dta: unknown field")
    assert not h.exists("ConfigMap", "a")
    lenient = application("lenient", h.remote.url, path="app", automated={},
                          options=("Validate=false",))
    h.install(lenient)
    status = h.run("lenient", _done)
    assert phase(status) == "Succeeded", message(status)
    assert "dta" not in h.get("ConfigMap", "a")
