"""From an Application's `source` / `sources` to render requests, through the Git cache.

Multi-source rules (Argo CD): every source is resolved separately (two sources tracking `HEAD`
of the same repository are not atomic, but one fetch per repository URL per call keeps them
consistent here); a source with `ref: name` lends its repository root to `$name/...` value
files; a source with a `ref` and neither `path` nor `chart` renders nothing itself, while one
that also has a `path` is rendered too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from headway.source.errors import RenderError
from headway.source.git import GitCache, GitCredentials, GitRepository
from headway.source.helm_dependencies import ChartFetcher
from headway.source.plugins import PluginCatalog
from headway.source.render import RenderRequest
from headway.source.spec import ApplicationSource
from headway.source.tree import TreeReader

__all__ = ["ResolvedSource", "render_requests", "resolve_sources"]

CredentialsFor = Callable[[str], GitCredentials | None]


@dataclass(frozen=True)
class ResolvedSource:
    """One source pinned to a commit, or a chart from a Helm repository pinned to a version
    (`repository` None, `sha` the chart version, `tree` the unpacked chart): what a sync
    records as the revision it applied."""

    index: int
    source: ApplicationSource
    repository: GitRepository | None
    sha: str
    tree: TreeReader


def resolve_sources(
    sources: Sequence[ApplicationSource],
    *,
    cache: GitCache,
    credentials_for: CredentialsFor | None = None,
    fetch: bool = True,
) -> list[ResolvedSource]:
    """Fetch each repository once, then resolve every source's `targetRevision`."""
    fetched: set[str] = set()
    resolved: list[ResolvedSource] = []
    for index, source in enumerate(sources):
        url = str(source.get("repoURL") or "")
        if not url:
            raise RenderError(f"sources[{index}].repoURL is required")
        creds = credentials_for(url) if credentials_for is not None else None
        repository = cache.repository(url, creds)
        if fetch and url not in fetched:
            repository.fetch()
            fetched.add(url)
        sha = repository.resolve(str(source.get("targetRevision") or "HEAD"))
        resolved.append(ResolvedSource(index, source, repository, sha, repository.tree(sha)))
    return resolved


def render_requests(
    resolved: Sequence[ResolvedSource],
    *,
    app_name: str,
    namespace: str = "",
    project: str = "",
    plugins: PluginCatalog | None = None,
    charts: ChartFetcher | None = None,
) -> list[RenderRequest]:
    """One request per source that renders manifests, each seeing every `ref` tree (and,
    with `charts`, fetching a Helm chart's dependencies from their repositories)."""
    refs: dict[str, TreeReader] = {}
    for item in resolved:
        name = str(item.source.get("ref") or "")
        if not name:
            continue
        if name in refs:
            raise RenderError(f"sources[{item.index}].ref: {name!r} is used by two sources")
        refs[name] = item.tree
    requests: list[RenderRequest] = []
    for item in resolved:
        source = item.source
        if source.get("ref") and not source.get("path") and not source.get("chart"):
            continue
        requests.append(
            RenderRequest(
                source=source,
                tree=item.tree,
                app_name=app_name,
                namespace=namespace,
                refs=refs,
                revision=item.sha,
                project=project,
                plugins=plugins or PluginCatalog(),
                charts=charts,
            )
        )
    return requests
