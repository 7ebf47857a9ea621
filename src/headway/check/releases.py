"""What one merge or one sync does to several environments or to stateful objects.

Seed 002 §5.7 (library-chart edits reach every environment at once; migration Jobs that carry
the Service's labels) and §3.3 (prune with no `Prune=false` on PVCs and stateful objects).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Iterator

from headway.check.application import sync_policy
from headway.check.context import AppUnit, CheckContext
from headway.check.findings import Finding, Rule, Severity, finding_at
from headway.check.manifest import (
    annotations_of,
    app_sources,
    as_dict,
    labels_of,
    normalize_repo_url,
    pod_template,
    resource_sync_options,
    selector_matches,
)
from headway.model.yamlload import Document

__all__ = [
    "HOOK_JOB_IN_SERVICE",
    "PRUNE_UNPROTECTED",
    "SHARED_LIBRARY_ALL_ENVIRONMENTS",
    "check_hook_jobs",
    "check_prune_protection",
    "check_shared_library",
]

SHARED_LIBRARY_ALL_ENVIRONMENTS = Rule(
    id="HW317",
    slug="shared-library-all-environments",
    severity=Severity.WARNING,
    title="A chart or library that reaches every environment in one commit",
    rationale="Seed 002 §5.7: with a library referenced by path and every Application on HEAD, "
    "a library edit reaches dev and prod in one merge; there is no library-level staging.",
    hint="Version the library and bump it per environment, or pin prod's targetRevision, or "
    "make CI render every dependent Application on a library change.",
)
HOOK_JOB_IN_SERVICE = Rule(
    id="HW318",
    slug="hook-job-in-service",
    severity=Severity.ERROR,
    title="A migration or hook Job whose pods match a Service selector",
    rationale="Seed 002 §5.7: while the Job runs, its pod is a Ready endpoint of the app's "
    "Service and receives traffic on a port nothing listens on.",
    hint="Give hook Jobs their own label set (e.g. app.kubernetes.io/component: migration) "
    "that no Service selects.",
)
PRUNE_UNPROTECTED = Rule(
    id="HW319",
    slug="prune-unprotected-state",
    severity=Severity.WARNING,
    title="Automated prune with no Prune=false on PersistentVolumeClaims or CRDs",
    rationale="Seed 002 §3.3 and seed 000: with prune, an accidental deletion in Git deletes "
    "in prod; a pruned PVC takes its data, a pruned CRD takes every custom resource.",
    hint="Annotate with `argocd.argoproj.io/sync-options: Prune=false` (or Prune=confirm).",
)

_PINNED = re.compile(r"^(?:[0-9a-f]{40}|v?\d+\.\d+(?:\.\d+)?(?:[-+].*)?)$")
_HOOKS = ("argocd.argoproj.io/hook", "helm.sh/hook")


def _destination(app: Document) -> str:
    dest = as_dict(as_dict(as_dict(app.obj).get("spec")).get("destination"))
    cluster = str(dest.get("name") or dest.get("server") or "")
    return f"{cluster}/{dest.get('namespace', '')}"


def _moving_revision(source: dict[str, object]) -> str | None:
    """The branch (or HEAD) a source follows, or None when it is pinned to a SHA or version."""
    revision = str(source.get("targetRevision") or "HEAD")
    return None if _PINNED.match(revision) else revision.lower()


def _library_uses(ctx: CheckContext) -> dict[tuple[str, str], list[Document]]:
    """(path, revision) -> the Applications that render from that path on that moving revision.

    Applications on different branches are staged by merges between branches, so only the
    same path on the same moving revision counts as shared.
    """
    uses: dict[tuple[str, str], list[Document]] = {}
    for unit in ctx.applications:
        app = unit.application
        assert app is not None
        chart_sources = [s for s in app_sources(app.obj) if s.get("path") and not s.get("ref")]
        for source in chart_sources:
            revision = _moving_revision(source)
            if revision is None:
                continue
            repo = normalize_repo_url(str(source.get("repoURL", "")))
            path = posixpath.normpath(str(source["path"]).strip("/"))  # `./lib` is `lib`
            uses.setdefault((f"{repo}//{path}", revision), []).append(app)
        revision = _moving_revision(chart_sources[0]) if chart_sources else None
        for library in ctx.library_paths.get(unit.name, ()) if revision else ():
            uses.setdefault((f"library//{library}", str(revision)), []).append(app)
    return uses


def check_shared_library(ctx: CheckContext) -> Iterable[Finding]:
    for (key, revision), apps in sorted(_library_uses(ctx).items()):
        destinations = {_destination(a) for a in apps}
        if len(destinations) < 2:
            continue
        names = ", ".join(sorted({a.name for a in apps}))
        path = key.split("//", 1)[1]
        first = min(apps, key=lambda a: (a.file, a.line))
        yield finding_at(
            SHARED_LIBRARY_ALL_ENVIRONMENTS,
            first,
            path=("spec",),
            message=f"{path} is rendered from {revision} by {names} "
            f"({len(destinations)} destinations): one commit to it reaches every one of them "
            "at once, and no environment gets to fail first",
            app=first.name,
        )


def _is_hook_job(doc: Document) -> bool:
    if doc.kind != "Job":
        return False
    hooked = any(key in annotations_of(doc.obj) for key in _HOOKS)
    return hooked or "migrat" in doc.name.lower()


def check_hook_jobs(ctx: CheckContext) -> Iterable[Finding]:
    for unit in ctx.units:
        services = list(unit.of_kind("Service"))
        for job in filter(_is_hook_job, unit.of_kind("Job")):
            pod_labels = labels_of(pod_template(job.obj))
            for service in services:
                selector = as_dict(as_dict(service.obj).get("spec")).get("selector")
                if not selector_matches(selector, pod_labels):
                    continue
                yield finding_at(
                    HOOK_JOB_IN_SERVICE,
                    job,
                    path=("spec", "template", "metadata", "labels"),
                    message=f"the pods of Job/{job.name} carry the labels Service/"
                    f"{service.name} selects: while the Job runs it is a Ready endpoint of the "
                    "Service and takes a share of production requests it cannot serve",
                    app=unit.name,
                )


def _prunes(unit: AppUnit) -> bool:
    if unit.application is None:
        return False
    automated = sync_policy(unit.application).get("automated")
    return isinstance(automated, dict) and automated.get("prune") is True


def _protected(doc: Document) -> bool:
    options = resource_sync_options(doc.obj)
    return bool(options & {"Prune=false", "Prune=confirm"})


def check_prune_protection(ctx: CheckContext) -> Iterable[Finding]:
    for unit in ctx.units:
        if not _prunes(unit):
            continue
        for doc in _stateful(unit):
            if _protected(doc):
                continue
            loss = "its data" if doc.kind == "PersistentVolumeClaim" else "every object of the kind"
            yield finding_at(
                PRUNE_UNPROTECTED,
                doc,
                path=("metadata",),
                message=f"Application/{unit.name} prunes automatically and {doc.kind}/"
                f"{doc.name} has no Prune=false: a commit that stops rendering it (its file "
                "deleted or moved, a value or chart version that drops it) deletes it in the "
                f"cluster, and {loss} with it{_keep_note(doc)}",
                app=unit.name,
            )


def _keep_note(doc: Document) -> str:
    """Helm's `keep` looks like protection and is none at prune: Argo CD reads it only when
    the Application is deleted (argo-helm's argo-rollouts chart puts it on its CRDs)."""
    annotations = as_dict(as_dict(as_dict(doc.obj).get("metadata")).get("annotations"))
    if "keep" not in str(annotations.get("helm.sh/resource-policy", "")):
        return ""
    return (
        " (its helm.sh/resource-policy: keep protects it only when the Application is deleted, "
        "not from prune)"
    )


def _stateful(unit: AppUnit) -> Iterator[Document]:
    return unit.of_kind("PersistentVolumeClaim", "CustomResourceDefinition")
