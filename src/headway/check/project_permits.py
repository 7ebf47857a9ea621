"""HW325: what an Application's AppProject refuses, found before a sync is refused for it.

Argo CD checks an Application's sources, destination and every resource it renders against
its AppProject when it syncs: a kind the project does not list, a repository outside
`sourceRepos` or a destination outside `destinations` fails the sync in production ("resource
... is not permitted in project ..."), after the merge. The checks here are the controller's
own (`sync/project.py`: the same functions refuse the sync), run on what the repository
renders, for every Application whose project the repository defines; a project defined
elsewhere is not judged (HW301 already refuses `default`).

What `check` cannot know it does not guess: a destination named by `name` where the project
lists clusters by `server` (or the reverse) is resolved through the repository's cluster
Secrets and the built-in `in-cluster`, and left alone when it cannot be; a custom kind is
cluster-scoped when a CustomResourceDefinition of the repository says so, else namespaced,
as most are.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from headway.check.context import AppUnit, CheckContext
from headway.check.findings import Finding, Rule, Severity, finding_at
from headway.check.manifest import app_sources, as_dict, as_list, group_of, name_of
from headway.model.yamlload import Document

if TYPE_CHECKING:  # imported when a repository defines a project: plain manifests never do
    from headway.model.appproject import AppProject, AppProjectSpec
    from headway.sync.project import Refusal

__all__ = ["RESOURCE_OUTSIDE_PROJECT", "check_project_permits"]

RESOURCE_OUTSIDE_PROJECT = Rule(
    id="HW325",
    slug="outside-project",
    severity=Severity.ERROR,
    title="A source, destination or rendered kind the Application's AppProject refuses",
    rationale="Argo CD refuses the sync of an Application whose project does not permit its "
    "repository, its destination or a kind it renders: the merge lands, the sync fails in "
    "production, and the change waits for someone to widen the project.",
    hint="Add the kind to the project's clusterResourceWhitelist (cluster-scoped) or "
    "namespaceResourceWhitelist, the repository to sourceRepos or the destination to "
    "destinations, in the same change; or render the object from an Application of a "
    "project that permits it.",
)

IN_CLUSTER = ("in-cluster", "https://kubernetes.default.svc")


def check_project_permits(ctx: CheckContext) -> Iterable[Finding]:
    if not ctx.projects:
        return
    projects = _parsed_projects(ctx)
    if not projects:
        return
    _SOURCES.clear()  # answers are keyed by the identity of this run's parsed projects
    _DESTINATIONS.clear()
    clusters = _known_clusters(ctx)
    cluster_scoped = _cluster_scoped_custom_kinds(ctx)
    for unit, app in ctx.application_documents():
        name = str(as_dict(as_dict(app.obj).get("spec")).get("project") or "default")
        project = projects.get(name)
        if project is None:
            continue
        where = _where(app, clusters)
        yield from _sources(unit, app, project)
        yield from _destination(unit, app, project, where)
        yield from _resources(unit, app, project, where, cluster_scoped)


def _parsed_projects(ctx: CheckContext) -> dict[str, AppProject]:
    from headway.model.appproject import parse_appproject

    found: dict[str, AppProject] = {}
    for name, document in ctx.projects.items():
        project, _diagnostics = parse_appproject(document)  # validation reports its faults
        if project is not None:
            found[name] = project
    return found


_SOURCES: dict[tuple[int, str], Refusal | None] = {}
_DESTINATIONS: dict[tuple[int, str, str, str], str | None] = {}


def _source_refusal(project: AppProject, url: str) -> Refusal | None:
    """`rules.source_refusal`, once per project and URL in a run: a fleet's Applications
    share a few repositories, and each answer normalizes and matches every pattern."""
    from headway.sync import project as rules

    key = (id(project), url)
    if key not in _SOURCES:
        _SOURCES[key] = rules.source_refusal(project.name, project.spec, url)
    return _SOURCES[key]


def _sources(unit: AppUnit, app: Document, project: AppProject) -> Iterator[Finding]:
    spec = as_dict(as_dict(app.obj).get("spec"))
    several = bool(as_list(spec.get("sources")))
    for index, source in enumerate(app_sources(app.obj)):
        url = str(source.get("repoURL") or "")
        if not url:
            continue  # a source without a repository is HW002's
        refusal = _source_refusal(project, url)
        if refusal is None:
            continue
        path = ("spec", "sources", index, "repoURL") if several else ("spec", "source", "repoURL")
        yield finding_at(
            RESOURCE_OUTSIDE_PROJECT,
            app,
            path=path,
            message=f"Application/{app.name}: {refusal}; Argo CD refuses its sync",
            app=unit.name,
        )


def _where(app: Document, clusters: Mapping[str, str]) -> tuple[str, str, str]:
    """The Application's destination (server, name, namespace), each of server and name
    completed from the other where `clusters` knows the cluster."""
    destination = as_dict(as_dict(as_dict(app.obj).get("spec")).get("destination"))
    server = str(destination.get("server") or "").rstrip("/")
    name = str(destination.get("name") or "")
    if not server:
        server = clusters.get(name, "")
    elif not name:
        name = next((n for n, s in clusters.items() if s == server), "")
    return server, name, str(destination.get("namespace") or "")


def _destination_refusal(
    project: AppProject, server: str, name: str, namespace: str
) -> str | None:
    """Why the project refuses the destination, once per project and destination in a run;
    None when it permits it or `check` cannot know (`_unresolved_could_match`)."""
    key = (id(project), server, name, namespace)
    if key not in _DESTINATIONS:
        _DESTINATIONS[key] = _judged_destination(project, server, name, namespace)
    return _DESTINATIONS[key]


def _judged_destination(
    project: AppProject, server: str, name: str, namespace: str
) -> str | None:
    from headway.sync import project as rules

    if not server and not name:
        return None  # no destination: validation's error
    refusal = rules.destination_refusal(
        project.name, project.spec, server=server, name=name, namespace=namespace
    )
    if refusal is None or _unresolved_could_match(project.spec, server, name, namespace):
        return None
    return str(refusal)


def _destination(
    unit: AppUnit, app: Document, project: AppProject, where: tuple[str, str, str]
) -> Iterator[Finding]:
    refusal = _destination_refusal(project, *where)
    if refusal is not None:
        yield finding_at(
            RESOURCE_OUTSIDE_PROJECT,
            app,
            path=("spec", "destination"),
            message=f"Application/{app.name}: {refusal}; Argo CD refuses its sync",
            app=unit.name,
        )


def _unresolved_could_match(spec: AppProjectSpec, server: str, name: str, namespace: str) -> bool:
    """Whether a destination that is missing its server or its name (neither the repository
    nor `in-cluster` says which) could be permitted by a project entry naming the missing
    one: then `check` cannot tell, and says nothing."""
    from headway.sync import project as rules

    if server and name:
        return False
    for item in spec.destinations:
        pattern = item.namespace or ""
        if pattern.startswith("!"):
            namespace_ok = not rules.glob_match(pattern[1:], namespace)
        else:
            namespace_ok = rules.glob_match(pattern, namespace)
        if not namespace_ok:
            continue
        if not server and item.server and not item.server.startswith("!"):
            return True
        if not name and item.name and not item.name.startswith("!"):
            return True
    return False


def _resources(
    unit: AppUnit,
    app: Document,
    project: AppProject,
    where: tuple[str, str, str],
    cluster_scoped: frozenset[tuple[str, str]],
) -> Iterator[Finding]:
    """One finding per refused (group, kind) of the unit, at its first object, counting the
    others: a project missing one kind should not bury the report under each object. A
    namespaced object that names a namespace other than the destination's is also judged as
    a destination there (the controller writes it there)."""
    from headway.sync.resources import is_namespaced

    server, cluster, destination_namespace = where
    refused: dict[tuple[str, str], tuple[Document, str, int]] = {}
    answers: dict[tuple[str, str, str], str | None] = {}
    by_name = {scope: _names_matter(project.spec, scope) for scope in (True, False)}
    for document in unit.objects:
        obj = document.obj
        group = group_of(obj.get("apiVersion"))
        kind = document.kind
        name = name_of(obj)
        namespaced = is_namespaced(group, kind, cluster_scoped=cluster_scoped)
        if by_name[namespaced]:
            answer = _refusal(project, group, kind, name, namespaced)
        else:
            key = (group, kind, "")
            if key not in answers:
                answers[key] = _refusal(project, group, kind, name, namespaced)
            answer = answers[key]
        namespace = str(as_dict(obj.get("metadata")).get("namespace") or "")
        if answer is None and namespaced and namespace and namespace != destination_namespace:
            answer = _destination_refusal(project, server, cluster, namespace)
            if answer is not None:
                answer = f"{group or 'core'}/{kind} {name} into namespace {namespace}: {answer}"
        if answer is None:
            continue
        first = refused.get((group, kind))
        refused[(group, kind)] = (
            (document, answer, 1) if first is None else (first[0], first[1], first[2] + 1)
        )
    for (_group, kind), (document, reason, count) in refused.items():
        more = f" (and {count - 1} more {kind} of this Application)" if count > 1 else ""
        yield finding_at(
            RESOURCE_OUTSIDE_PROJECT,
            document,
            path=("kind",),
            message=f"Application/{app.name} renders {reason}{more}; Argo CD refuses the sync "
            f"of the whole Application",
            app=unit.name,
        )


def _refusal(
    project: AppProject, group: str, kind: str, name: str, namespaced: bool
) -> str | None:
    from headway.sync import project as rules

    refusal = rules.resource_refusal(
        project.name, project.spec, group=group, kind=kind, name=name, namespaced=namespaced
    )
    return None if refusal is None else f"{refusal.reason}, in project {project.name!r}"


def _names_matter(spec: AppProjectSpec, namespaced: bool) -> bool:
    """Whether an entry of the lists that judge this scope names objects (`name:`), so the
    answer differs by object; else it is one per (group, kind)."""
    lists: tuple[Any, ...] = (
        (spec.namespace_resource_whitelist, spec.namespace_resource_blacklist)
        if namespaced
        else (spec.cluster_resource_whitelist, spec.cluster_resource_blacklist)
    )
    return any(item.name for entries in lists for item in entries)


def _known_clusters(ctx: CheckContext) -> dict[str, str]:
    """Destination names to servers: `in-cluster`, and the repository's cluster Secrets."""
    known = {IN_CLUSTER[0]: IN_CLUSTER[1]}
    for document in ctx.objects_of_kind("Secret"):
        obj = as_dict(document.obj)
        labels = as_dict(as_dict(obj.get("metadata")).get("labels"))
        if labels.get("argocd.argoproj.io/secret-type") != "cluster":
            continue
        data = {**as_dict(obj.get("stringData"))}
        name, server = str(data.get("name") or ""), str(data.get("server") or "")
        if name and server:
            known[name] = server.rstrip("/")
    return known


def _cluster_scoped_custom_kinds(ctx: CheckContext) -> frozenset[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    for document in (*ctx.objects_of_kind("CustomResourceDefinition"), *ctx.base_crds):
        spec = as_dict(as_dict(document.obj).get("spec"))
        if spec.get("scope") == "Cluster":
            kind = str(as_dict(spec.get("names")).get("kind") or "")
            found.add((str(spec.get("group") or ""), kind))
    return frozenset(found)
