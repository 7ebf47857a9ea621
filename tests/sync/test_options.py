"""Sync options: parsing, resource overrides, and each option's effect on the plan."""

from __future__ import annotations

import pytest

from headway.sync.options import (
    ConfirmableSwitch,
    PropagationPolicy,
    SyncOptions,
    parse_option_items,
    resource_options,
)
from headway.sync.planner import plan_sync
from headway.sync.resources import ResourceKey
from headway.sync.tasks import Action, Disposition
from sync.objects import crd, obj

OPTS = "argocd.argoproj.io/sync-options"


@pytest.mark.parametrize(
    ("item", "field", "value"),
    [
        ("Prune=false", "prune", ConfirmableSwitch.FALSE),
        ("Prune=confirm", "prune", ConfirmableSwitch.CONFIRM),
        ("Delete=false", "delete", ConfirmableSwitch.FALSE),
        ("Delete=confirm", "delete", ConfirmableSwitch.CONFIRM),
        ("Validate=false", "validate", False),
        ("SkipDryRunOnMissingResource=true", "skip_dry_run_on_missing_resource", True),
        ("ApplyOutOfSyncOnly=true", "apply_out_of_sync_only", True),
        ("PrunePropagationPolicy=orphan", "prune_propagation_policy", PropagationPolicy.ORPHAN),
        (
            "PrunePropagationPolicy=background",
            "prune_propagation_policy",
            PropagationPolicy.BACKGROUND,
        ),
        ("PruneLast=true", "prune_last", True),
        ("Replace=true", "replace", True),
        ("Force=true", "force", True),
        ("ServerSideApply=true", "server_side_apply", True),
        ("ClientSideApplyMigration=false", "client_side_apply_migration", False),
        ("FailOnSharedResource=true", "fail_on_shared_resource", True),
        ("RespectIgnoreDifferences=true", "respect_ignore_differences", True),
        ("CreateNamespace=true", "create_namespace", True),
    ],
)
def test_every_option_parses(item: str, field: str, value: object) -> None:
    parsed = parse_option_items([item])
    assert parsed.problems == ()
    assert getattr(parsed.options, field) == value
    assert getattr(SyncOptions(), field) != value  # each one changes a default


def test_defaults_follow_argo_cd() -> None:
    defaults = SyncOptions()
    assert defaults.prune is ConfirmableSwitch.TRUE
    assert defaults.prune_propagation_policy is PropagationPolicy.FOREGROUND
    assert defaults.validate and not defaults.server_side_apply


def test_unknown_and_invalid_options_are_reported() -> None:
    parsed = parse_option_items(
        ["Prune=maybe", "ApplyOutOfSynOnly=true", "Replace", "PruneLast=true"]
    )
    assert parsed.options.prune_last
    assert parsed.problems == (
        'syncOptions: Prune="maybe" must be one of: true, false, confirm',
        'syncOptions: "ApplyOutOfSynOnly" is not a known sync option '
        "(did you mean ApplyOutOfSyncOnly?)",
        'syncOptions: "Replace" is not a sync option (expected Key=value)',
    )


def test_resource_annotation_overrides_application() -> None:
    app = parse_option_items(["ServerSideApply=true", "Validate=false"]).options
    resource = obj("Deployment", "api", annotations={OPTS: "ServerSideApply=false, Replace=true"})
    merged = resource_options(app, resource).options
    assert not merged.server_side_apply
    assert merged.replace and not merged.validate


def test_prune_false_marks_the_prune_skipped() -> None:
    keep = obj("PersistentVolumeClaim", "data", annotations={OPTS: "Prune=false"})
    plan = plan_sync([], [keep, obj("ConfigMap", "old")])
    dispositions = {t.key.name: t.disposition for t in plan.tasks}
    assert dispositions == {"data": Disposition.PRUNE_DISABLED, "old": Disposition.RUN}
    assert str(Disposition.PRUNE_DISABLED) == "ignored (no prune)"


def test_prune_confirm_waits_until_confirmed() -> None:
    live = [
        obj("Namespace", "team", annotations={OPTS: "Prune=confirm"}),
        obj("ConfigMap", "c", annotations={OPTS: "Prune=confirm"}),
    ]
    plan = plan_sync([], live)
    assert [t.key.name for t in plan.awaiting_confirmation] == ["team", "c"]
    assert plan.confirmation_message() == (
        "Waiting for pruning confirmation of v1/Namespace/team and 1 more resources"
    )
    confirmed = plan_sync([], live, prune_confirmed=True)
    assert confirmed.awaiting_confirmation == ()
    assert confirmed.confirmation_message() is None


def test_operation_without_prune_reports_requires_pruning() -> None:
    plan = plan_sync([], [obj("ConfigMap", "old")], prune=False)
    assert plan.tasks[0].disposition is Disposition.PRUNE_NOT_REQUESTED


def test_apply_out_of_sync_only_skips_synced_resources() -> None:
    desired = [obj("ConfigMap", "same"), obj("ConfigMap", "changed"), obj("ConfigMap", "new")]
    live = [obj("ConfigMap", "same"), obj("ConfigMap", "changed")]
    modified = {
        ResourceKey("", "ConfigMap", "shop", "same"): False,
        ResourceKey("", "ConfigMap", "shop", "changed"): True,
    }
    options = parse_option_items(["ApplyOutOfSyncOnly=true"]).options
    plan = plan_sync(desired, live, options=options, modified=modified)
    ran = [t.key.name for step in plan.waves() for t in step.tasks]
    assert ran == ["changed", "new"]
    without = plan_sync(desired, live, modified=modified)
    assert [t.key.name for s in without.waves() for t in s.tasks] == ["changed", "new", "same"]


def test_skip_dry_run_is_automatic_for_custom_resources_of_a_crd_in_the_same_sync() -> None:
    widget = obj("Widget", "w", api_version="example.com/v1")
    gadget = obj("Gadget", "g", api_version="other.io/v1")
    annotated = obj(
        "Thing",
        "t",
        api_version="other.io/v1",
        annotations={OPTS: "SkipDryRunOnMissingResource=true"},
    )
    plan = plan_sync([widget, gadget, annotated, crd("example.com", "Widget")], [])
    skip = {t.key.name: t.skip_dry_run for t in plan.tasks}
    assert skip == {"widgets.example.com": False, "g": False, "w": True, "t": True}


def test_prune_last_moves_prunes_after_the_last_sync_wave() -> None:
    desired = [obj("Deployment", "api", wave=3)]
    live = [
        obj("ConfigMap", "old", wave=-2),
        obj("ConfigMap", "keep-last", annotations={OPTS: "PruneLast=true"}),
    ]
    plan = plan_sync(desired, live)
    # Prune waves -2 and 0 are mirrored first (as in gitops-engine), then PruneLast moves
    # keep-last after wave 3.
    assert [(s.wave, [t.key.name for t in s.tasks]) for s in plan.waves()] == [
        (0, ["old"]),
        (3, ["api"]),
        (4, ["keep-last"]),
    ]
    everything_last = plan_sync(desired, live, options=SyncOptions(prune_last=True))
    assert [(s.wave, [t.key.name for t in s.tasks]) for s in everything_last.waves()] == [
        (3, ["api"]),
        (4, ["keep-last", "old"]),
    ]


def test_create_namespace_adds_a_presync_namespace_task() -> None:
    options = SyncOptions(create_namespace=True)
    plan = plan_sync([obj("ConfigMap", "c")], [], options=options, namespace="shop")
    first = plan.tasks[0]
    assert (first.phase, first.action, str(first.key)) == (
        "PreSync",
        Action.APPLY,
        "Namespace/shop",
    )
    exists = plan_sync(
        [obj("ConfigMap", "c")], [], options=options, namespace="shop", existing_namespaces={"shop"}
    )
    assert [str(t.key) for t in exists.tasks] == ["ConfigMap/c"]
    assert len(plan_sync([obj("ConfigMap", "c")], [], namespace="shop").tasks) == 1


def test_create_namespace_never_lands_on_a_cluster_scoped_custom_kind() -> None:
    template = obj(
        "ClusterAnalysisTemplate", "errors", namespace=None, api_version="argoproj.io/v1alpha1"
    )
    scoped = {("argoproj.io", "ClusterAnalysisTemplate")}
    options = SyncOptions(create_namespace=True)
    plan = plan_sync([template], [], options=options, namespace="shop", cluster_scoped=scoped)
    keys = [t.key for t in plan.tasks]
    assert ResourceKey("argoproj.io", "ClusterAnalysisTemplate", "", "errors") in keys


def test_per_task_apply_options_travel_with_the_task() -> None:
    replaced = obj("Job", "j", annotations={OPTS: "Replace=true,Force=true,Validate=false"})
    app = SyncOptions(server_side_apply=True, prune_propagation_policy=PropagationPolicy.ORPHAN)
    (task,) = plan_sync([replaced], [], options=app).tasks
    assert task.options.replace and task.options.force and not task.options.validate
    assert task.options.server_side_apply
    assert task.options.prune_propagation_policy is PropagationPolicy.ORPHAN


def test_bad_annotation_on_a_resource_is_reported_with_the_resource() -> None:
    plan = plan_sync([obj("ConfigMap", "c", annotations={OPTS: "Prune=never"})], [])
    assert plan.problems == (
        'ConfigMap/c: sync-options annotation: Prune="never" must be one of: true, false, confirm',
    )


def test_fail_on_shared_resource_refuses_resources_of_another_app() -> None:
    mine = obj(
        "ConfigMap",
        "mine",
        annotations={"argocd.argoproj.io/tracking-id": "shop:/ConfigMap:shop/mine"},
    )
    theirs = obj(
        "ConfigMap",
        "cfg",
        annotations={"argocd.argoproj.io/tracking-id": "billing:/ConfigMap:shop/cfg"},
    )
    labelled = obj("Service", "api")
    labelled["metadata"]["labels"] = {"app.kubernetes.io/instance": "billing"}
    desired = [obj("ConfigMap", "mine"), obj("ConfigMap", "cfg"), obj("Service", "api")]
    live = [mine, theirs, labelled]
    options = SyncOptions(fail_on_shared_resource=True)
    plan = plan_sync(desired, live, options=options, app_name="shop")
    assert plan.refusal == (
        "Shared resource found: ConfigMap/cfg is part of applications shop and billing, "
        "Service/api is part of applications shop and billing"
    )
    assert plan_sync(desired, live, app_name="shop").refusal is None


def test_options_from_the_application_sync_policy() -> None:
    from headway.model.application import SyncPolicy
    from headway.sync.options import options_from_policy

    policy = SyncPolicy(None, ("CreateNamespace=true", "PruneLast=true"), None, None)
    parsed = options_from_policy(policy)
    assert parsed.options.create_namespace and parsed.options.prune_last
    assert options_from_policy(None).options == SyncOptions()


def test_diff_verdicts_drive_apply_out_of_sync_only() -> None:
    from headway.diff import diff_objects
    from headway.sync.planner import modified_from_diff

    desired = [
        obj("Namespace", "team"),
        obj("ConfigMap", "same", data={"a": "1"}),
        obj("ConfigMap", "changed", data={"a": "2"}),
    ]
    live = [
        obj("Namespace", "team"),
        obj("ConfigMap", "same", data={"a": "1"}),
        obj("ConfigMap", "changed", data={"a": "1"}),
    ]
    modified = modified_from_diff(diff_objects(desired, live, namespace="shop"))
    options = SyncOptions(apply_out_of_sync_only=True)
    plan = plan_sync(desired, live, options=options, modified=modified, namespace="shop")
    assert [str(t.key) for s in plan.waves() for t in s.tasks] == ["ConfigMap/changed"]


def test_an_automated_policy_field_written_as_a_sync_option_says_where_it_belongs() -> None:
    """argocd-autopilot's bootstrap Applications (argoproj-labs/argocd-autopilot c102467,
    cmd/commands/common.go) list `allowEmpty=true` in syncOptions beside
    `automated.allowEmpty: true`; before, the error named no way out."""
    parsed = parse_option_items(["allowEmpty=true", "selfheal=true"])
    assert parsed.problems == (
        'syncOptions: "allowEmpty" is not a known sync option (it is a field of the automated '
        "sync policy, spec.syncPolicy.automated.allowEmpty; Argo CD ignores it as a sync option)",
        'syncOptions: "selfheal" is not a known sync option (it is a field of the automated '
        "sync policy, spec.syncPolicy.automated.selfHeal; Argo CD ignores it as a sync option)",
    )
