"""Issue 15: what the ApplicationSet controller writes — policies, conditions as Argo CD
writes them, and the refusals that keep a bad generation away from existing Applications."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from headway.appset.generate import GeneratedApp, Generation, GenerationError
from headway.appset.plan import ALLOW_EMPTY_ANNOTATION, EMPTY_REFUSED, decide, with_write_error

NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def _appset(policy: str | None = None, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"generators": [], "template": {}}
    if policy:
        spec["syncPolicy"] = {"applicationsSync": policy}
    meta: dict[str, Any] = {"name": "set", "namespace": "argocd", "uid": "u-1"}
    if annotations:
        meta["annotations"] = annotations
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "ApplicationSet",
        "metadata": meta,
        "spec": spec,
    }


def _app(name: str, path: str = "p") -> dict[str, Any]:
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": name, "namespace": "argocd"},
        "spec": {
            "project": "default",
            "source": {"repoURL": "r", "path": path},
            "destination": {"server": "https://kubernetes.default.svc"},
        },
    }


def _live(name: str, path: str = "p") -> dict[str, Any]:
    app = _app(name, path)
    app["metadata"].update(
        resourceVersion="7",
        uid=f"uid-{name}",
        ownerReferences=[
            {
                "apiVersion": "argoproj.io/v1alpha1",
                "kind": "ApplicationSet",
                "name": "set",
                "uid": "u-1",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
    )
    return app


def _generation(*apps: dict[str, Any]) -> Generation:
    return Generation(
        tuple(GeneratedApp(a["metadata"]["name"], a, ("spec", "template")) for a in apps)
    )


def _conditions(status: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {c["type"]: (c["status"], c["reason"]) for c in status["conditions"]}


def test_a_generation_error_writes_only_conditions() -> None:
    error = GenerationError("RenderTemplateParamsError", 'map has no entry for key "x"', ("spec",))
    plan = decide(_appset(), Generation(error=error), [_live("a"), _live("b")], invalid={}, now=NOW)
    assert (plan.creates, plan.updates, plan.deletes) == ((), (), ())
    assert _conditions(plan.status) == {
        "ParametersGenerated": ("False", "ErrorOccurred"),
        "ErrorOccurred": ("True", "RenderTemplateParamsError"),
        "ResourcesUpToDate": ("False", "ErrorOccurred"),
    }


def test_sync_policy_creates_updates_and_deletes() -> None:
    plan = decide(
        _appset(),
        _generation(_app("a", "new"), _app("c")),
        [_live("a"), _live("b")],
        invalid={},
        now=NOW,
    )
    assert [c["metadata"]["name"] for c in plan.creates] == ["c"]
    assert plan.creates[0]["metadata"]["ownerReferences"][0]["uid"] == "u-1"
    assert [
        (u["metadata"]["name"], u["spec"]["source"]["path"], u["metadata"]["resourceVersion"])
        for u in plan.updates
    ] == [("a", "new", "7")]
    assert plan.deletes == ("b",)
    assert _conditions(plan.status)["ResourcesUpToDate"] == ("True", "ApplicationSetUpToDate")


def test_an_unchanged_application_is_not_rewritten() -> None:
    plan = decide(_appset(), _generation(_app("a")), [_live("a")], invalid={}, now=NOW)
    assert plan.updates == ()


@pytest.mark.parametrize(
    ("policy", "updates", "deletes"),
    [
        ("create-only", False, False),
        ("create-update", True, False),
        ("create-delete", False, True),
        ("sync", True, True),
    ],
)
def test_applications_sync_policies(policy: str, updates: bool, deletes: bool) -> None:
    plan = decide(
        _appset(policy),
        _generation(_app("a", "new"), _app("c")),
        [_live("a"), _live("b")],
        invalid={},
        now=NOW,
    )
    assert [c["metadata"]["name"] for c in plan.creates] == ["c"]
    assert bool(plan.updates) is updates
    assert bool(plan.deletes) is deletes


def test_zero_generated_applications_delete_nothing_without_the_annotation() -> None:
    plan = decide(_appset(), _generation(), [_live("a"), _live("b")], invalid={}, now=NOW)
    assert plan.deletes == ()
    assert _conditions(plan.status)["ErrorOccurred"] == ("True", EMPTY_REFUSED)
    allowed = _appset(annotations={ALLOW_EMPTY_ANNOTATION: "true"})
    assert decide(
        allowed, _generation(), [_live("a"), _live("b")], invalid={}, now=NOW
    ).deletes == ("a", "b")


def test_fewer_but_not_zero_applications_are_deleted_as_argo_does() -> None:
    plan = decide(_appset(), _generation(_app("a")), [_live("a"), _live("b")], invalid={}, now=NOW)
    assert plan.deletes == ("b",)


def test_refused_applications_are_neither_written_nor_deleted() -> None:
    invalid = {"b": "application b: project 'default': destination is not permitted"}
    plan = decide(
        _appset(),
        _generation(_app("a", "new"), _app("b", "new")),
        [_live("a"), _live("b")],
        invalid=invalid,
        now=NOW,
    )
    assert [u["metadata"]["name"] for u in plan.updates] == ["a"]
    assert plan.deletes == ()
    assert _conditions(plan.status)["ErrorOccurred"] == ("True", "ApplicationValidationError")
    [error] = [c for c in plan.status["conditions"] if c["type"] == "ErrorOccurred"]
    assert error["message"] == invalid["b"]


def test_condition_transition_time_moves_only_when_the_status_changes() -> None:
    first = decide(_appset(), _generation(_app("a")), [], invalid={}, now=NOW)
    appset = {**_appset(), "status": first.status}
    later = datetime(2026, 1, 2, 4, 0, 0, tzinfo=UTC)
    again = decide(appset, _generation(_app("a")), [], invalid={}, now=later)
    assert again.status["conditions"] == first.status["conditions"]
    error = GenerationError("RenderTemplateParamsError", "bad", ("spec",))
    failed = decide(appset, Generation(error=error), [], invalid={}, now=later)
    stamps = {c["type"]: c["lastTransitionTime"] for c in failed.status["conditions"]}
    assert stamps["ErrorOccurred"] == "2026-01-02T04:00:00Z"


def test_a_refused_write_is_reported_with_argos_reason() -> None:
    done = decide(_appset(), _generation(_app("a")), [], invalid={}, now=NOW)
    status = with_write_error(
        done.status, "CreateApplicationError", "Application a: invalid", now=NOW
    )
    assert _conditions(status) == {
        "ParametersGenerated": ("True", "ParametersGenerated"),
        "ErrorOccurred": ("True", "CreateApplicationError"),
        "ResourcesUpToDate": ("False", "ErrorOccurred"),
    }


def _with_revision(app: dict[str, Any], revision: str) -> dict[str, Any]:
    return {
        **app,
        "spec": {**app["spec"], "source": {**app["spec"]["source"], "targetRevision": revision}},
    }


@pytest.mark.parametrize(
    "entry",
    [
        {"jsonPointers": ["/spec/source/targetRevision"]},
        {"jqPathExpressions": [".spec.source.targetRevision"]},
        {"name": "a", "jsonPointers": ["/spec/source/targetRevision"]},
    ],
)
def test_ignored_application_differences_keep_the_live_value(entry: dict[str, Any]) -> None:
    appset = _appset()
    appset["spec"]["ignoreApplicationDifferences"] = [entry]
    live = _with_revision(_live("a"), "hotfix")  # changed by hand
    assert (
        decide(
            appset, _generation(_with_revision(_app("a"), "HEAD")), [live], invalid={}, now=NOW
        ).updates
        == ()
    )
    moved = _with_revision(_app("a", "new-path"), "HEAD")
    [update] = decide(appset, _generation(moved), [live], invalid={}, now=NOW).updates
    assert update["spec"]["source"] == {
        "repoURL": "r",
        "path": "new-path",
        "targetRevision": "hotfix",
    }


def test_without_ignore_a_hand_made_change_is_overwritten() -> None:
    live = _with_revision(_live("a"), "hotfix")
    [update] = decide(
        _appset(), _generation(_with_revision(_app("a"), "HEAD")), [live], invalid={}, now=NOW
    ).updates
    assert update["spec"]["source"]["targetRevision"] == "HEAD"


def test_an_ignore_rule_for_another_application_does_not_apply() -> None:
    appset = _appset()
    appset["spec"]["ignoreApplicationDifferences"] = [
        {"name": "b", "jsonPointers": ["/spec/source/targetRevision"]}
    ]
    live = _with_revision(_live("a"), "hotfix")
    [update] = decide(
        appset, _generation(_with_revision(_app("a"), "HEAD")), [live], invalid={}, now=NOW
    ).updates
    assert update["spec"]["source"]["targetRevision"] == "HEAD"


def test_an_update_keeps_the_application_controllers_delete_hook_finalizers() -> None:
    """Before: only the PostDelete finalizer was kept, so every update of the set removed the
    PreDelete finalizers and a deletion then ran no PreDelete hook."""
    live = _live("a")
    kept = [
        "pre-delete-finalizer.argocd.argoproj.io",
        "pre-delete-finalizer.argocd.argoproj.io/cleanup",
        "post-delete-finalizer.argocd.argoproj.io",
    ]
    live["metadata"]["finalizers"] = [*kept, "example.com/other"]
    plan = decide(_appset("sync"), _generation(_app("a", "changed")), [live], invalid={}, now=NOW)
    (updated,) = plan.updates
    assert updated["metadata"]["finalizers"] == kept
