"""Argo CD Application settings that let an outage through (seed 002 §2.3, §3.2, §3.3, §5.3).

Projects, finalizers, sync policy and retry, multi-source `$values`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from headway.check.context import AppUnit, CheckContext
from headway.check.findings import Finding, Rule, Severity, finding_at
from headway.check.manifest import app_sources, as_dict, as_list
from headway.model.yamlload import Document

__all__ = [
    "AUTOMATED_WITHOUT_RETRY",
    "DEFAULT_PROJECT",
    "EXPLICIT_SELF_HEAL_FALSE",
    "IGNORE_MISSING_VALUE_FILES",
    "MISSING_FINALIZER",
    "PERMISSIVE_PROJECT",
    "REF_SOURCE_WITH_PATH",
    "RETRY_UNBOUNDED",
    "SOURCES_TRACK_HEAD",
    "VALUES_REF_MISPLACED",
    "check_finalizer",
    "check_multi_source",
    "check_projects",
    "check_sync_policy",
    "sync_policy",
]

DEFAULT_PROJECT = Rule(
    id="HW301",
    slug="default-project",
    severity=Severity.ERROR,
    title="An Application in the `default` AppProject",
    rationale="Seed 002 §3.2: `default` allows any repo, any destination and every kind, "
    "cluster-scoped ones included; anyone who can merge a values change can render a "
    "ClusterRoleBinding into prod.",
    hint="Create a project per tier (platform, <env>-workloads) with listed sourceRepos, "
    "destinations and `clusterResourceWhitelist: []` for workloads, and use it.",
)
PERMISSIVE_PROJECT = Rule(
    id="HW302",
    slug="permissive-project",
    severity=Severity.ERROR,
    title="Workloads in a project that allows every destination and cluster-scoped kinds",
    rationale="Seed 002 §3.2: the default project's spec copied under another name is the "
    "same privilege escalation.",
    hint="List the destinations, and give workload projects `clusterResourceWhitelist: []`.",
)
MISSING_FINALIZER = Rule(
    id="HW303",
    slug="missing-finalizer",
    severity=Severity.WARNING,
    title="An Application without the resources finalizer",
    rationale="Seed 002 §2.3: without it, deleting the Application leaves its workload "
    "orphaned and running.",
    hint="Add `finalizers: [resources-finalizer.argocd.argoproj.io]` from creation.",
)
AUTOMATED_WITHOUT_RETRY = Rule(
    id="HW310",
    slug="automated-without-retry",
    severity=Severity.WARNING,
    title="Automated sync with no retry",
    rationale="Seed 002 §3.3, §5.1: a failed automated sync is not retried for the same "
    "commit; the app sits OutOfSync while reading Healthy.",
    hint="Add `retry: {limit: 5, backoff: {duration: 10s, factor: 2, maxDuration: 3m}}`.",
)
RETRY_UNBOUNDED = Rule(
    id="HW311",
    slug="retry-without-limit",
    severity=Severity.WARNING,
    title="A retry with no useful limit",
    rationale="Seed 002 §3.3: bounded retries cover transient failures without hammering a "
    "broken webhook; `limit` defaults to 0 (no retry at all) and a negative one never stops.",
    hint="Set `retry.limit` to a small positive number (5) with capped backoff.",
)
IGNORE_MISSING_VALUE_FILES = Rule(
    id="HW312",
    slug="ignore-missing-value-files",
    severity=Severity.WARNING,
    title="`ignoreMissingValueFiles: true`",
    rationale="Seed 002 §2.2: the flag also silences a typo'd or renamed values-prod.yaml; the "
    "app quietly syncs on chart defaults.",
    hint="Remove the flag; make optional layers opt-in per app instead.",
)
EXPLICIT_SELF_HEAL_FALSE = Rule(
    id="HW313",
    slug="explicit-self-heal-false",
    severity=Severity.INFO,
    title="`selfHeal: false` written explicitly",
    rationale="Seed 002 §2.3: the field is omitempty; the API server drops the false and "
    "tools that own the Application (Terraform) show a permanent diff.",
    hint="Omit the key when self-heal should be off.",
)
VALUES_REF_MISPLACED = Rule(
    id="HW314",
    slug="values-ref-misplaced",
    severity=Severity.ERROR,
    title="A `$ref` values file that Argo CD cannot resolve",
    rationale="Seed 002 §5.3: `$values` must be the first path segment and name a source "
    "with that `ref`.",
    hint="Write `$<ref>/path/in/repo.yaml`, with a source carrying `ref: <ref>`.",
)
REF_SOURCE_WITH_PATH = Rule(
    id="HW315",
    slug="ref-source-with-path",
    severity=Severity.WARNING,
    title="A `ref` source that also has a `path`",
    rationale="Seed 002 §5.3: Argo CD then also renders manifests from that path.",
    hint="Leave `path` off the values source.",
)
SOURCES_TRACK_HEAD = Rule(
    id="HW316",
    slug="sources-track-head",
    severity=Severity.INFO,
    title="Several sources of one Application all track a moving revision",
    rationale="Seed 002 §5.3, §5.1: sources are resolved separately, not atomically; a "
    "mismatch mid-apply produced a ComparisonError and a stuck app.",
    hint="Pin the chart source, or accept and alert on OutOfSync (seed 002 §5.8).",
)

_FINALIZER = "resources-finalizer.argocd.argoproj.io"
_WORKLOAD_KINDS = {"Deployment", "StatefulSet", "DaemonSet", "Rollout", "Job", "CronJob", "Pod"}
_MOVING = {"", "head"}


def sync_policy(app: Document) -> dict[str, Any]:
    return as_dict(as_dict(as_dict(app.obj).get("spec")).get("syncPolicy"))


def check_projects(ctx: CheckContext) -> Iterable[Finding]:
    for unit, app in ctx.application_documents():
        project = str(as_dict(as_dict(app.obj).get("spec")).get("project") or "default")
        defined = ctx.projects.get(project)
        if project == "default":
            yield finding_at(
                DEFAULT_PROJECT,
                app,
                path=("spec", "project"),
                message=f"Application/{app.name} is in the `default` project, which allows any "
                "source, any destination and every kind including cluster-scoped ones: a merged "
                "values change can render a ClusterRoleBinding into this cluster",
                app=unit.name,
            )
        elif defined is not None and _permissive(defined) and _has_workloads(unit):
            yield finding_at(
                PERMISSIVE_PROJECT,
                app,
                path=("spec", "project"),
                message=f"Application/{app.name} deploys workloads through AppProject/{project}, "
                "which allows every destination and cluster-scoped kinds: the project draws no "
                "boundary, a values change can render cluster-wide RBAC",
                app=unit.name,
            )


def _permissive(project: Document) -> bool:
    spec = as_dict(as_dict(project.obj).get("spec"))
    any_destination = any(
        "*" in (str(d.get("server", "")), str(d.get("name", "")))
        and str(d.get("namespace", "")) == "*"
        for d in map(as_dict, as_list(spec.get("destinations")))
    )
    cluster_kinds = any(
        str(r.get("group")) == "*" and str(r.get("kind")) == "*"
        for r in map(as_dict, as_list(spec.get("clusterResourceWhitelist")))
    )
    return any_destination and cluster_kinds


def _has_workloads(unit: AppUnit) -> bool:
    return unit.has_kind(*_WORKLOAD_KINDS)


def check_finalizer(ctx: CheckContext) -> Iterable[Finding]:
    for unit, app in ctx.application_documents():
        finalizers = as_list(as_dict(as_dict(app.obj).get("metadata")).get("finalizers"))
        if any(str(f).startswith(_FINALIZER) for f in finalizers):
            continue
        yield finding_at(
            MISSING_FINALIZER,
            app,
            path=("metadata",),
            message=f"Application/{app.name} has no {_FINALIZER} finalizer: deleting it "
            "leaves every resource it deployed orphaned and running",
            app=unit.name,
        )


def check_sync_policy(ctx: CheckContext) -> Iterable[Finding]:
    for unit, app in ctx.application_documents():
        for finding in _sync_policy_findings(app):
            yield finding.with_app(unit.name)


def _sync_policy_findings(app: Document) -> Iterator[Finding]:
    policy = sync_policy(app)
    automated = policy.get("automated")
    base = ("spec", "syncPolicy")
    enabled = isinstance(automated, dict) and automated.get("enabled") is not False
    if enabled and "retry" not in policy:
        yield finding_at(
            AUTOMATED_WITHOUT_RETRY,
            app,
            path=(*base, "automated"),
            message=f"Application/{app.name} syncs automatically with no retry: one transient "
            "failure (a webhook timeout, an API hiccup) leaves it OutOfSync on the old version "
            "until the next commit, while its health still reads Healthy",
        )
    if "retry" in policy:
        yield from _retry_findings(app, as_dict(policy.get("retry")))
    if as_dict(automated).get("selfHeal") is False:
        yield finding_at(
            EXPLICIT_SELF_HEAL_FALSE,
            app,
            path=(*base, "automated", "selfHeal"),
            message="`selfHeal: false` is dropped by the API server (omitempty): whatever "
            "writes this Application (Terraform, a generator) sees a permanent diff",
        )


def _retry_findings(app: Document, retry: dict[str, Any]) -> Iterator[Finding]:
    limit = retry.get("limit")
    path = ("spec", "syncPolicy", "retry")
    if not isinstance(limit, int) or limit == 0:
        message = (
            f"Application/{app.name} has a retry block with no limit: `limit` defaults to 0, "
            "which performs no retry at all — the block reads as protection and gives none"
        )
        yield finding_at(RETRY_UNBOUNDED, app, path=path, message=message)
    elif limit < 0:
        message = (
            f"Application/{app.name} retries without end (limit {limit}): a permanently "
            "broken sync hammers the API server and webhooks forever and never surfaces as "
            "a failed sync"
        )
        yield finding_at(RETRY_UNBOUNDED, app, path=(*path, "limit"), message=message)


def check_multi_source(ctx: CheckContext) -> Iterable[Finding]:
    for unit, app in ctx.application_documents():
        sources = app_sources(app.obj)
        multi = "sources" in as_dict(as_dict(app.obj).get("spec"))
        for index, source in enumerate(sources):
            path = ("spec", "sources", index) if multi else ("spec", "source")
            for finding in _source_findings(app, source, sources, path):
                yield finding.with_app(unit.name)
        moving = [s for s in sources if str(s.get("targetRevision", "")).lower() in _MOVING]
        if multi and len(moving) >= 2:
            yield finding_at(
                SOURCES_TRACK_HEAD,
                app,
                path=("spec", "sources"),
                message=f"{len(moving)} sources of Application/{app.name} all track HEAD: they "
                "are resolved one at a time, so a push between them renders a mix of two "
                "commits, or a ComparisonError that leaves the app stuck",
                app=unit.name,
            )


def _source_findings(
    app: Document, source: dict[str, Any], sources: list[dict[str, Any]], path: tuple[Any, ...]
) -> Iterator[Finding]:
    helm = as_dict(source.get("helm"))
    if helm.get("ignoreMissingValueFiles") is True:
        yield finding_at(
            IGNORE_MISSING_VALUE_FILES,
            app,
            path=(*path, "helm", "ignoreMissingValueFiles"),
            message=f"Application/{app.name} ignores missing values files: a renamed or "
            "typo'd values-prod.yaml is skipped silently and production runs on chart defaults",
        )
    if source.get("ref") and source.get("path"):
        yield finding_at(
            REF_SOURCE_WITH_PATH,
            app,
            path=(*path, "path"),
            message=f"source with ref {source.get('ref')!r} also has path "
            f"{source.get('path')!r}: Argo CD renders and applies manifests from that path too",
        )
    refs = {str(s.get("ref")) for s in sources if s.get("ref")}
    for index, value_file in enumerate(as_list(helm.get("valueFiles"))):
        problem = _value_ref_problem(str(value_file), refs)
        if problem:
            yield finding_at(
                VALUES_REF_MISPLACED,
                app,
                path=(*path, "helm", "valueFiles", index),
                message=problem,
            )


def _value_ref_problem(value_file: str, refs: set[str]) -> str | None:
    if "$" not in value_file:
        return None
    match = re.match(r"^\$([A-Za-z0-9_-]+)/", value_file)
    if match is None:
        return (
            f"values file {value_file!r}: a `$ref` is read only as the first path segment, so "
            "Argo CD looks for a file by this literal name and the sync fails"
        )
    if match.group(1) not in refs:
        return (
            f"values file {value_file!r} names ${match.group(1)}, but no source of this "
            "Application has `ref: " + match.group(1) + "`: the render fails"
        )
    return None
