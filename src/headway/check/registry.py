"""Every rule and the function that finds it; `run_checks` applies config and opt-outs."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from headway.check import (
    analysis_rules,
    application,
    diffing,
    drill_gates,
    empty_render,
    empty_result,
    forge_hosts,
    ordering,
    progressive,
    project_permits,
    promotion,
    releases,
    repeated_apps,
    rollout_refs,
    template_refs,
    transition,
)
from headway.check.context import CheckContext
from headway.check.findings import Finding, Rule, Severity, finding_at
from headway.check.suppression import SUPPRESSION_WITHOUT_REASON, collect_suppressions
from headway.model.diagnostics import Diagnostic
from headway.model.yamlload import paused_gc

__all__ = ["ALL_RULES", "CHECKS", "UNRESOLVED_SOURCE", "rule_by_id", "run_checks"]

CheckFn = Callable[[CheckContext], Iterable[Finding]]

UNRESOLVED_SOURCE = Rule(
    id="HW002",
    slug="unresolved-source",
    severity=Severity.ERROR,
    title="An Application source could not be rendered",
    rationale="A check that silently skips what it cannot read reports a clean bill of health "
    "for exactly the parts nobody looked at.",
    hint="If the URL is this repository, list it under `selfURLs:` in the check config (or "
    "set the `origin` remote); map other repositories under `repositories:`; otherwise fix "
    "what the message names (the path, chart or values file, or the Jsonnet file and line).",
)


def check_unresolved_sources(ctx: CheckContext) -> Iterable[Finding]:
    for problem in ctx.unresolved:
        path: tuple[str | int, ...] = ("spec", "source")
        if "sources" in problem.app.obj.get("spec", {}):
            path = ("spec", "sources", problem.index)
        yield finding_at(
            UNRESOLVED_SOURCE, problem.app, path=path, message=problem.reason, app=problem.app.name
        )


INVALID_MANIFEST = Rule(
    id="HW003",
    slug="invalid-manifest",
    severity=Severity.ERROR,
    title="A manifest that is not valid YAML, or that `headway validate` rejects",
    rationale="Argo CD fails to render the whole source over one bad file, and an object with a "
    "wrong field, a rule Argo enforces broken, or a feature Headway does not run yet is refused "
    "when it is applied; a check that skipped them would pass the very change that breaks the "
    "sync.",
    hint="Fix the YAML or the field at the reported line (`headway validate FILE` shows the "
    "same error).",
)


def check_invalid_manifests(ctx: CheckContext) -> Iterable[Finding]:
    for problem in ctx.load_problems:
        yield _at_diagnostic(INVALID_MANIFEST, problem, _invalid_message(problem))


RUN_TIME_SET = Rule(
    id="HW004",
    slug="set-generated-at-run-time",
    severity=Severity.WARNING,
    title="An ApplicationSet whose Applications exist only at run time",
    rationale="A pullRequest, scmProvider, plugin or clusterDecisionResource generator reads "
    "open pull requests, an organization's repositories, a plugin service or cluster "
    "resources, which no checkout holds, and a clusters generator selecting none of the "
    "repository's cluster Secrets reads the clusters registered at run time: the "
    "Applications it will make are not checked here, and saying so is better than a clean "
    "report (or an error nobody can fix).",
    hint="Check the template with sample parameters in a test fixture (a list generator, or "
    "a cluster Secret with the labels and annotations the clusters generator selects), or "
    "rely on the controller: a generation that fails the project rules or a template error "
    "changes no Application and sets a condition on the set.",
)


def check_run_time_sets(ctx: CheckContext) -> Iterable[Finding]:
    for problem in ctx.run_time_sets:
        field = f"{problem.field}: " if problem.field else ""
        yield _at_diagnostic(RUN_TIME_SET, problem, f"{field}{problem.message}")


def _at_diagnostic(rule: Rule, problem: Diagnostic, message: str) -> Finding:
    """A finding of `rule` where a loader's diagnostic points (no Application owns it)."""
    return Finding(
        rule=rule.id,
        slug=rule.slug,
        severity=rule.severity,
        file=problem.file,
        line=problem.line,
        app="",
        resource=f"{problem.kind}/{problem.name}" if problem.kind else "",
        message=message,
        hint=rule.hint,
    )


# How an ApplicationSet whose generator's repository is not at hand is said
# (`headway.appset.documents.NOT_RENDERED`; validate reads it as a warning, check as HW003).
_NOT_RENDERED = "not rendered:"


def _invalid_message(problem: Diagnostic) -> str:
    if not problem.kind and not problem.field:  # the file itself: YAML or encoding
        return (
            f"{problem.message}: nothing in this file is applied, and a sync that renders it fails"
        )
    field = f"{problem.field}: " if problem.field else ""
    if problem.message.startswith(_NOT_RENDERED):  # an input not at hand, not a bad object
        return f"{field}{problem.message}: the Applications it generates were not checked"
    consequence = "headway validate rejects it: applying it fails, or it never runs"
    return f"{field}{problem.message} ({consequence})"


@dataclass(frozen=True)
class RegisteredCheck:
    rules: tuple[Rule, ...]
    run: CheckFn


CHECKS: tuple[RegisteredCheck, ...] = (
    RegisteredCheck((UNRESOLVED_SOURCE,), check_unresolved_sources),
    RegisteredCheck((INVALID_MANIFEST,), check_invalid_manifests),
    RegisteredCheck((RUN_TIME_SET,), check_run_time_sets),
    RegisteredCheck((empty_render.EMPTY_RENDER,), empty_render.check_empty_renders),
    RegisteredCheck((ordering.WAVE_BEFORE_TARGET,), ordering.check_wave_before_target),
    RegisteredCheck((ordering.UNASSESSED_CUSTOM_KIND,), ordering.check_unassessed_custom_kind),
    RegisteredCheck((ordering.INDEFINITE_PAUSE_GATE,), ordering.check_indefinite_pause_gate),
    RegisteredCheck((ordering.CRD_VERSION_REMOVED,), ordering.check_crd_versions),
    RegisteredCheck(
        (progressive.CANARY_WITHOUT_STEPS, progressive.CANARY_WITHOUT_ANALYSIS),
        progressive.check_canary_gates,
    ),
    RegisteredCheck(
        (analysis_rules.UNSCOPED_ANALYSIS_QUERY,), analysis_rules.check_unscoped_queries
    ),
    RegisteredCheck((empty_result.PASSES_ON_EMPTY,), empty_result.check_passes_on_empty),
    RegisteredCheck(
        (analysis_rules.RESOURCE_ONLY_ANALYSIS,), analysis_rules.check_resource_only_analysis
    ),
    RegisteredCheck(
        (analysis_rules.INTERVAL_WINDOW_MISMATCH,), analysis_rules.check_interval_windows
    ),
    RegisteredCheck(
        (analysis_rules.UNREACHABLE_FAILURE_LIMIT,),
        analysis_rules.check_unreachable_failure_limit,
    ),
    RegisteredCheck(
        (analysis_rules.MEASURES_BEFORE_TRAFFIC,), analysis_rules.check_measures_before_traffic
    ),
    RegisteredCheck(
        (template_refs.MISSING_ANALYSIS_TEMPLATE,), template_refs.check_missing_templates
    ),
    RegisteredCheck((template_refs.UNPASSED_TEMPLATE_ARG,), template_refs.check_unpassed_args),
    RegisteredCheck(
        (rollout_refs.MISSING_ROLLOUT_REFERENCE,), rollout_refs.check_rollout_references
    ),
    RegisteredCheck(
        (drill_gates.ANALYSIS_NEVER_FIRES, drill_gates.ANALYSIS_FALSE_ABORTS),
        drill_gates.check_drill_gates,
    ),
    RegisteredCheck((progressive.REPLICA_WEIGHT_APPROXIMATION,), progressive.check_replica_weights),
    RegisteredCheck((progressive.BLUE_GREEN_UNGATED,), progressive.check_blue_green_ungated),
    RegisteredCheck(
        (progressive.MIRROR_WITHOUT_CANARY_PODS, progressive.HEADER_ROUTE_WITHOUT_CANARY_PODS),
        progressive.check_route_targets,
    ),
    RegisteredCheck((progressive.EXPERIMENT_NEVER_ENDS,), progressive.check_experiment_ends),
    RegisteredCheck((progressive.QUEUE_CONSUMER_CANARY,), progressive.check_queue_consumer_canary),
    RegisteredCheck(
        (application.DEFAULT_PROJECT, application.PERMISSIVE_PROJECT), application.check_projects
    ),
    RegisteredCheck(
        (project_permits.RESOURCE_OUTSIDE_PROJECT,), project_permits.check_project_permits
    ),
    RegisteredCheck((application.MISSING_FINALIZER,), application.check_finalizer),
    RegisteredCheck(
        (diffing.IGNORE_MATCHES_NOTHING, diffing.IGNORE_TOO_BROAD), diffing.check_ignore_entries
    ),
    RegisteredCheck((diffing.ROUTER_WEIGHTS_NOT_IGNORED,), diffing.check_router_weights),
    RegisteredCheck((diffing.SYSTEM_IGNORE_HIDES_ROLLOUT,), diffing.check_system_ignores),
    RegisteredCheck((forge_hosts.FORGE_HOST_NOT_ALLOWED,), forge_hosts.check_forge_hosts),
    RegisteredCheck(
        (repeated_apps.REPEATED_APPLICATION,), repeated_apps.check_repeated_applications
    ),
    RegisteredCheck((diffing.HPA_REPLICAS_SELF_HEAL,), diffing.check_hpa_replicas),
    RegisteredCheck(
        (diffing.RESPECT_IGNORE_MISUSED, diffing.IMMUTABLE_IGNORE_NOT_RESPECTED),
        diffing.check_respect_ignore,
    ),
    RegisteredCheck(
        (
            application.AUTOMATED_WITHOUT_RETRY,
            application.RETRY_UNBOUNDED,
            application.EXPLICIT_SELF_HEAL_FALSE,
        ),
        application.check_sync_policy,
    ),
    RegisteredCheck(
        (
            application.IGNORE_MISSING_VALUE_FILES,
            application.VALUES_REF_MISPLACED,
            application.REF_SOURCE_WITH_PATH,
            application.SOURCES_TRACK_HEAD,
        ),
        application.check_multi_source,
    ),
    RegisteredCheck((releases.SHARED_LIBRARY_ALL_ENVIRONMENTS,), releases.check_shared_library),
    RegisteredCheck((releases.HOOK_JOB_IN_SERVICE,), releases.check_hook_jobs),
    RegisteredCheck((releases.PRUNE_UNPROTECTED,), releases.check_prune_protection),
    RegisteredCheck((promotion.UNGATED_LAST_ENVIRONMENT,), promotion.check_pipeline_gates),
    RegisteredCheck(
        (promotion.PIPELINE_UNKNOWN_APPLICATION,), promotion.check_pipeline_applications
    ),
)

# Rules whose findings come from the CLI (they need renders of other revisions).
CLI_RULES: tuple[Rule, ...] = (transition.TRANSITION_DROPS, transition.TRANSITION_HIDDEN_CHANGE)

ALL_RULES: tuple[Rule, ...] = tuple(
    sorted(
        (
            SUPPRESSION_WITHOUT_REASON,
            *(rule for check in CHECKS for rule in check.rules),
            *CLI_RULES,
        ),
        key=lambda rule: rule.id,
    )
)


def rule_by_id(rule_id: str) -> Rule | None:
    return next((r for r in ALL_RULES if r.id == rule_id.upper()), None)


def run_checks(ctx: CheckContext, *, disabled: Sequence[str] = ()) -> list[Finding]:
    """All findings, minus disabled rules and honored per-resource opt-outs, sorted by place."""
    off = {rule_id.upper() for rule_id in disabled}
    suppressions = collect_suppressions(ctx, (r.id for r in ALL_RULES))
    findings: list[Finding] = list(suppressions.problems)
    with paused_gc():  # the rules build small acyclic objects over a large live heap
        for check in CHECKS:
            if all(rule.id in off for rule in check.rules):
                continue
            findings.extend(check.run(ctx))
    kept = {f for f in findings if f.rule not in off and not suppressions.silences(f)}
    return sorted(kept, key=_place)


def _place(finding: Finding) -> tuple[str, int, str, str, str, str, str]:
    """A total order: findings that differ only in their Application or hint (one object
    rendered by several apps) still come out in one order whatever the hash seed."""
    f = finding
    return (f.file, f.line, f.rule, f.resource, f.message, f.app, f.hint)
