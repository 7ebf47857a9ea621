"""Desired state for an Application: fetch (on the poll interval or when a local ref moved),
resolve each source's revision, render through the shared render cache.

A render is keyed by the Git object ids it read, so a refresh where nothing changed re-uses
every result and a commit that touches one app's path re-renders that app only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pygit2

from headway.clock import Clock
from headway.controllers.app.commit_files import changed_paths
from headway.controllers.app.kept_identities import KeptIdentities, Refs
from headway.model.application import Application
from headway.model.diagnostics import Severity
from headway.model.obj import Obj
from headway.source.errors import RenderError, SourceError
from headway.source.git import GitCache, local_repo_path
from headway.source.helm_repo import HelmCharts
from headway.source.plugins import PluginCatalog
from headway.source.render import Chosen, RenderCache, RenderRequest, choose
from headway.source.sources import ResolvedSource, render_requests
from headway.source.spec import ApplicationSource, raw_sources
from headway.source.tree import GitTree
from headway.source.tree_listings import TreeEntries

_FULL_SHA = re.compile(r"[0-9a-f]{40}")

__all__ = [
    "DEFAULT_POLL_SECONDS",
    "DesiredState",
    "LocalRefWatcher",
    "SourceReader",
]

# Argo CD's `timeout.reconciliation` default: 3 minutes.
DEFAULT_POLL_SECONDS = 180.0


@dataclass(frozen=True)
class DesiredState:
    """Rendered objects at resolved commits (one per source), or the errors that stopped it."""

    objects: tuple[Obj, ...]
    revisions: tuple[str, ...]
    errors: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    # Equal fingerprints mean equal rendered objects: the content ids of every tree read
    # plus the source parameters (not the commit, which moves with unrelated changes).
    fingerprint: str = ""

    @property
    def revision(self) -> str:
        return self.revisions[0] if self.revisions else ""


class LocalRefWatcher:
    """Notices a local repository's refs moving by stat-ing HEAD, packed-refs and every
    file under refs/ (what a commit or push rewrites), without reading Git objects."""

    def __init__(self) -> None:
        self._seen: dict[str, tuple[tuple[str, int, int], ...]] = {}

    def changed(self, urls: Sequence[str]) -> list[str]:
        moved = []
        for url in urls:
            root = local_repo_path(url)
            if root is None:
                continue
            signature = _ref_signature(root)
            if url in self._seen and self._seen[url] != signature:
                moved.append(url)
            self._seen[url] = signature
        return moved


def _ref_signature(root: Path) -> tuple[tuple[str, int, int], ...]:
    git_dir = root / ".git" if (root / ".git").is_dir() else root
    paths = [git_dir / "HEAD", git_dir / "packed-refs"]
    refs = git_dir / "refs"
    if refs.is_dir():
        paths.extend(p for p in refs.rglob("*") if p.is_file())
    out = []
    for path in paths:
        try:
            stat = path.stat()
        except OSError:
            continue
        # Git rewrites a ref by renaming a lock file over it: a new inode even when the
        # coarse file-system clock leaves the mtime unchanged.
        out.append((str(path), stat.st_mtime_ns, stat.st_ino))
    return tuple(sorted(out))


class SourceReader:
    """Renders Applications' sources; fetches each remote at most once per poll interval
    unless `mark_changed` says it moved."""

    def __init__(
        self,
        *,
        git: GitCache,
        clock: Clock,
        render_cache: RenderCache | None = None,
        poll_seconds: float = DEFAULT_POLL_SECONDS,
        plugins: PluginCatalog | None = None,
        charts: HelmCharts | None = None,
    ) -> None:
        self._git = git
        # Charts from Helm repositories; their index is read again when Git would be fetched.
        self._charts = charts or HelmCharts(git.root.parent / f"{git.root.name}-charts")
        self._clock = clock
        self._plugins = plugins or PluginCatalog()
        self.render_cache = render_cache or RenderCache(max_entries=4096)
        self._poll = poll_seconds
        self._fetched_at: dict[str, float] = {}
        self._rendered: dict[tuple[str, str], DesiredState] = {}
        # When each kept render that failed was made (`_retry_due`), by the same key.
        self._failed_at: dict[tuple[str, str], float] = {}
        self._shas: dict[tuple[str, str], str] = {}
        self._trees: dict[str, GitTree] = {}
        # Per app and what its renders read besides Git (`_identity_key`): the last identity,
        # carried to a new commit with every app of the same refs (`kept_identities`).
        self._identities: KeptIdentities[Sequence[ResolvedSource]] = KeptIdentities(
            self._touched_between
        )
        # Per commit pair: every path a file changed at, and every directory above one.
        self._touched: dict[tuple[str, str], frozenset[str]] = {}
        # Directories the last tree diffs read: a commit's old side is the one before's new.
        self._tree_entries = TreeEntries(keep=64)
        self._uncached: set[str] = set()  # apps whose next render bypasses the render cache

    def mark_changed(self, url: str) -> None:
        self._fetched_at.pop(url, None)

    def refresh(self, app_name: str, raw: Mapping[str, Any], *, hard: bool) -> None:
        """A requested refresh of one app: its repositories are fetched and its revisions
        resolved again on the next render; `hard` also forgets its renders, and renders it
        once without the shared render cache (a render is keyed by the content it read, so
        this only matters for a renderer whose output is not a function of that content)."""
        urls = {str(s.get("repoURL") or "") for s in raw_sources(raw)}
        for url in urls:
            self.mark_changed(url)
        self._shas = {k: v for k, v in self._shas.items() if k[0] not in urls}
        if not hard:
            return
        self._rendered = {k: v for k, v in self._rendered.items() if k[0] != app_name}
        self._failed_at = {k: v for k, v in self._failed_at.items() if k[0] != app_name}
        self._identities.forget(lambda key: key[0] != app_name)
        self._uncached.add(app_name)

    def _fetch_due(self, sources: Sequence[ApplicationSource]) -> None:
        now = self._clock.monotonic()
        for source in sources:
            url = str(source.get("repoURL") or "")
            last = self._fetched_at.get(url)
            # A source pinned to a full SHA needs no fetch (a commit never changes; one not
            # here is fetched by `_resolve`), so a rollback to an old commit syncs with the
            # remote down.
            pinned = _FULL_SHA.fullmatch(str(source.get("targetRevision") or "").lower())
            if url and pinned is None and (last is None or now - last >= self._poll):
                if source.get("chart"):
                    self._charts.forget_index(url)
                    self._fetched_at[url] = now
                    continue
                self._git.repository(url).fetch()
                self._fetched_at[url] = now
                self._shas = {k: v for k, v in self._shas.items() if k[0] != url}

    def _resolve(self, sources: Sequence[ApplicationSource]) -> list[ResolvedSource]:
        """Each source at a commit. Ref resolutions are remembered until the next fetch of
        their repository (only a fetch moves refs in the cache), trees by commit."""
        resolved = []
        for index, source in enumerate(sources):
            url = str(source.get("repoURL") or "")
            if not url:
                raise RenderError(f"sources[{index}].repoURL is required")
            if source.get("chart"):  # the chart version is the source's revision
                chart = self._charts.resolve(source)
                resolved.append(ResolvedSource(index, source, None, chart.ref.version, chart.tree))
                continue
            repository = self._git.repository(url)
            revision = str(source.get("targetRevision") or "HEAD")
            sha = self._shas.get((url, revision))
            if sha is None:
                # A full SHA the last fetch did not bring (a commit pushed since, e.g. a
                # rollback's) is fetched on its own, as Argo CD does; one already here is free.
                full_sha = _FULL_SHA.fullmatch(revision.lower()) is not None
                sha = repository.resolve(revision, fetch_missing=full_sha)
                self._shas[(url, revision)] = sha
            tree = self._trees.get(sha)
            if tree is None:
                if len(self._trees) > 256:
                    self._trees.clear()
                tree = self._trees[sha] = repository.tree(sha, listings=self._tree_entries)
            resolved.append(ResolvedSource(index, source, repository, sha, tree))
        return resolved

    def desired(
        self, app: Application, raw: Mapping[str, Any], *, revisions: Sequence[str] = ()
    ) -> DesiredState:
        """Render `app` (`raw` is its object, for the source dicts); `revisions` pins each
        source to a commit (a running operation)."""
        sources = _pinned(raw_sources(raw), revisions)
        try:
            self._fetch_due(sources)
            resolved = self._resolve(sources)
            namespace = app.spec.destination.namespace or ""
            requests = render_requests(
                resolved,
                app_name=app.name,
                namespace=namespace,
                project=app.spec.project,
                plugins=self._plugins,
                charts=self._charts.resolve_dependency,
            )
        except SourceError as err:
            return DesiredState((), (), (f"{err}",))
        shas = tuple(r.sha for r in resolved)
        try:
            fingerprint, chosen = self._fingerprint(app, namespace, resolved, sources, requests)
        except SourceError as err:
            return DesiredState((), shas, (f"{err}",))
        key = (app.name, fingerprint)
        known = self._rendered.get(key)
        # `known.errors` first: a render that worked costs no call (an untouched app's
        # carry-over is a few lookups).
        retry = known is not None and bool(known.errors) and self._retry_due(key)
        if known is not None and not retry:  # same content ids: the same objects
            return DesiredState(known.objects, shas, known.errors, known.warnings, fingerprint)
        cached = not retry and app.name not in self._uncached
        state = self._render(requests, shas, fingerprint, cached=cached, chosen=chosen)
        self._uncached.discard(app.name)
        if len(self._rendered) > 4 * 4096:
            self._rendered.clear()
            self._failed_at.clear()
        self._rendered[key] = state
        if state.errors:
            self._failed_at[key] = self._clock.monotonic()
        else:
            self._failed_at.pop(key, None)
        return state

    def _retry_due(self, key: tuple[str, str]) -> bool:
        """Whether the kept render under `key`, which failed, did so a poll interval ago or
        more. A failure may come from outside Git (a plugin's service, a chart dependency's
        repository, a timeout under load), so it is tried again, without the render cache,
        as a fetch would be; a render that worked is kept until its inputs change."""
        failed_at = self._failed_at.get(key)
        return failed_at is None or self._clock.monotonic() - failed_at >= self._poll

    def _fingerprint(
        self,
        app: Application,
        namespace: str,
        resolved: Sequence[ResolvedSource],
        sources: Sequence[ApplicationSource],
        requests: Sequence[RenderRequest],
    ) -> tuple[str, list[Chosen] | None]:
        """The render's content identity, and each request's renderer and inputs where they
        were looked up for it (a render then keys its cache with them instead of looking
        them up again). At a fixed commit the identity cannot change, so the last one is
        kept with its commits; at a new commit a render bounded to its sources' paths (a
        directory source with no link or Jsonnet reaching out) whose paths the commit did
        not touch keeps it, carried over with every app of the same refs at once
        (`kept_identities`), instead of choosing the renderer and looking its inputs up
        again."""
        shas = tuple(r.sha for r in resolved)
        key = _identity_key(app, namespace, sources)
        known = self._identities.fingerprint(key, shas, resolved)
        if known is not None:
            return known, None
        chosen = [choose(r) for r in requests]
        identities = [_request_identity(r, c) for r, c in zip(requests, chosen, strict=True)]
        fingerprint = json.dumps(identities, sort_keys=True, default=str)
        bounded = all(_bounded_to_path(r, i) for r, i in zip(requests, identities, strict=True))
        # A source that renders nothing itself (a `ref` only) lends its files to the others.
        bounded_to = (
            frozenset(f"{i}:{r.path}" for i, r in enumerate(requests))
            if bounded and len(requests) == len(shas)
            else None
        )
        self._identities.keep(
            key,
            refs=_refs(sources),
            shas=shas,
            fingerprint=fingerprint,
            bounded_to=bounded_to,
            resolved=resolved,
        )
        return fingerprint, chosen

    def _touched_between(
        self, before: tuple[str, ...], resolved: Sequence[ResolvedSource], shas: tuple[str, ...]
    ) -> frozenset[str] | None:
        """Every `<source index>:<path>` changed between each source's commit in `before`
        and in `shas` (`_touched_paths`); None when a source's two commits cannot be
        compared (a chart version has no commits) or the number of sources differs."""
        if len(before) != len(resolved):
            return None
        touched: set[str] = set()
        for index, (old, source) in enumerate(zip(before, resolved, strict=True)):
            if old == source.sha:
                continue
            found = (
                None
                if source.repository is None
                else self._touched_paths(source.repository.repo, old, source.sha)
            )
            if found is None:
                return None
            touched.update(f"{index}:{path}" for path in found)
        return frozenset(touched)

    def _touched_paths(self, repo: pygit2.Repository, old: str, new: str) -> frozenset[str] | None:
        """Every path a file was added, changed or removed at between two commits, with
        every directory above it ("" too), so "did anything under `path` change" is one
        lookup; None when the commits cannot be compared."""
        known = self._touched.get((old, new))
        if known is None:
            try:
                before, after = repo[old].peel(pygit2.Tree), repo[new].peel(pygit2.Tree)
                files = changed_paths(repo, before, after, entries=self._tree_entries)
            except (KeyError, ValueError, pygit2.GitError):
                return None
            paths: set[str] = set()
            for file in files:
                paths.update(_with_parents(file))
            if len(self._touched) > 256:
                self._touched.clear()
            known = self._touched[(old, new)] = frozenset(paths)
        return known

    def _render(
        self,
        requests: Sequence[RenderRequest],
        shas: tuple[str, ...],
        fingerprint: str,
        *,
        cached: bool = True,
        chosen: Sequence[Chosen] | None = None,
    ) -> DesiredState:
        objects: list[Obj] = []
        errors: list[str] = []
        warnings: list[str] = []
        for index, request in enumerate(requests):
            try:
                found = chosen[index] if chosen is not None else None
                result = (
                    self.render_cache.render(request, found)
                    if cached
                    else (found or choose(request)).renderer.render(request)
                )
            except SourceError as err:
                errors.append(str(err))
                continue
            for diagnostic in result.diagnostics:
                bucket = errors if diagnostic.severity is Severity.ERROR else warnings
                bucket.append(str(diagnostic))
            # The rendered dicts themselves, not copies: they are read only (`prepare_desired`
            # builds what is applied), and a copy of every object outlived each cold refresh,
            # for the garbage collector to rescan (bench/bench_refresh.py).
            objects.extend(
                d.obj if type(d.obj) is dict else dict(d.obj)
                for d in result.documents
                if isinstance(d.obj, Mapping)
            )
        return DesiredState(tuple(objects), shas, tuple(errors), tuple(warnings), fingerprint)


def _identity_key(
    app: Application, namespace: str, sources: Sequence[ApplicationSource]
) -> tuple[str, str, str, str]:
    """Everything but Git content that `render_requests` hands a render (the reader's own
    plugin catalog and chart fetcher aside): the app's name, destination namespace and
    project (`ARGOCD_APP_PROJECT_NAME`, which Jsonnet, plugins and Kustomize annotations
    can read) and its sources. A kept identity is reused only under the same key."""
    parameters = json.dumps(list(sources), sort_keys=True, default=str)
    return (app.name, namespace, app.spec.project, parameters)


def _refs(sources: Sequence[ApplicationSource]) -> Refs:
    """Each source's repository and revision as `_resolve` reads them: apps with equal refs
    resolve to equal commits."""
    return tuple(
        (str(s.get("repoURL") or ""), str(s.get("targetRevision") or "HEAD")) for s in sources
    )


def _with_parents(path: str) -> list[str]:
    """`a/b/c` -> `a/b/c`, `a/b`, `a`, `` (the root)."""
    found = [path]
    while path:
        path = path.rpartition("/")[0]
        found.append(path)
    return found


def _bounded_to_path(request: RenderRequest, identity: list[Any]) -> bool:
    """Whether a render reads nothing but the files under its source's path: a directory
    render whose only input is that path's tree (a link leading out of the path or a Jsonnet
    file adds inputs), chosen without a plugin's find command (which may look anywhere)."""
    renderer, _source, inputs = identity[:3]
    if renderer != "Directory" or len(inputs) != 1:
        return False
    return all(p.discover.file_name or p.discover.glob for p in request.plugins.discovering)


def _request_identity(request: RenderRequest, chosen: Chosen) -> list[Any]:
    """What a render of `request` depends on: the renderer's own list of content ids it
    reads (`chosen.inputs`: so a Kustomize base outside the path or a `$ref` values file
    counts), and the parameters; not the commit."""
    source = {k: v for k, v in request.source.items() if k != "targetRevision"}
    return [chosen.renderer.name, source, chosen.inputs, request.app_name, request.namespace]


def _pinned(
    sources: Sequence[ApplicationSource], revisions: Sequence[str]
) -> list[ApplicationSource]:
    if not revisions:
        return list(sources)
    pinned: list[ApplicationSource] = []
    for index, source in enumerate(sources):
        copy: ApplicationSource = dict(source)  # type: ignore[assignment]
        if index < len(revisions) and revisions[index]:
            copy["targetRevision"] = revisions[index]
        pinned.append(copy)
    return pinned
