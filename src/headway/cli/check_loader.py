"""Turn a repository into a `CheckContext`: find Applications, render them, keep the rest.

This is the I/O edge of `headway check`: it reads trees (working copy or a commit), parses
YAML once per file, renders every Application found (app-of-apps included) through the
renderer `headway serve` uses (`headway.source.render`: the same source-type choice, globs,
directory options and errors), and records what no Application owns as plain manifests.
Sources it cannot resolve or render are recorded, never skipped.

A file under an Application's directory source that its options leave out (`exclude`, not
matched by `include`, below the path without `recurse`) is never applied by Argo CD: it is
neither validated nor checked as a plain manifest, unless another Application renders it.
Only a source that rendered without errors leaves files out; under a source that failed,
every file stays a plain manifest, so a broken Application hides nothing. YAML syntax
errors are reported for every scanned file (a broken file may hold an Application).
"""

from __future__ import annotations

import bisect
import codecs
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING, cast

from headway.appset.documents import is_application_set, render_documents
from headway.appset.inputs import ClusterSecret, InputUnavailable
from headway.check.context import AppUnit, CheckContext, UnresolvedSource
from headway.check.drill_engine import DrillEngine, DrillSettings
from headway.check.manifest import (
    app_sources,
    as_dict,
    group_of,
    name_of,
    namespace_of,
    normalize_repo_url,
)
from headway.cli.check_drill import drill_gate
from headway.cli.check_tree import manifest_files
from headway.cluster.cluster_secrets import (
    ClusterSecretError,
    is_cluster_secret,
    parse_cluster_secret,
)
from headway.model.diagnostics import Diagnostic, Severity
from headway.model.manifests import ParseMemo
from headway.model.validate import validate_documents
from headway.model.yamlload import Document, LoadResult, load_documents, paused_gc
from headway.source.errors import SourceError
from headway.source.library import library_paths
from headway.source.plugins import PluginCatalog
from headway.source.render import (
    Renderer,
    RenderRequest,
    RenderResult,
    choose_renderer,
    render_key,
)
from headway.source.render_directory import (
    DirectoryRenderer,
    load_manifest_file,
    manifest_objects,
)
from headway.source.spec import ApplicationSource
from headway.source.tree import TreeReader

if TYPE_CHECKING:
    from headway.cli.check_drill_cache import DrillAnswers
    from headway.cli.check_parse_cache import ParseCache

__all__ = ["RenderMemo", "RenderOutcome", "RepositoryLoader", "cluster_secrets_in", "normalize_url"]


def normalize_url(url: str) -> str:
    return normalize_repo_url(url)


@dataclass(frozen=True)
class RenderOutcome:
    """The objects one source renders, the repository files it read, or why it could not."""

    documents: tuple[Document, ...] = ()
    files: tuple[str, ...] = ()
    problem: str = ""
    library_paths: tuple[str, ...] = ()
    # Files of this checkout under a directory source's path that its options leave out.
    left_out: tuple[str, ...] = ()
    # Files of this checkout under the path of a source that failed: none may be left out.
    unsure: tuple[str, ...] = ()


@dataclass
class _AppRender:
    """What one Application's sources render and which files of this checkout they account
    for: read (`owned`), deliberately left out, or under a failed source (`unsure`)."""

    objects: tuple[Document, ...]
    problems: list[UnresolvedSource]
    owned: set[str]
    library: tuple[str, ...]
    left_out: set[str]
    unsure: set[str]


@dataclass
class RenderMemo:
    """Parses and renders shared by loaders of several revisions of one repository (`headway
    diff`): a file parses once per blob, a source renders once per set of inputs, so what
    a change leaves alone is never parsed or rendered twice."""

    parses: dict[tuple[str, str], LoadResult] = field(default_factory=dict)
    renders: dict[str, RenderResult] = field(default_factory=dict)
    rendered: int = 0  # renders that ran (the others came from `renders`)
    # A shared document validates once; the document is kept so its id stays its own.
    validated: dict[int, tuple[Document, list[Diagnostic]]] = field(default_factory=dict)

    def validate(self, documents: list[Document], parses: ParseMemo) -> list[Diagnostic]:
        found: list[Diagnostic] = []
        for doc in documents:
            if id(doc) not in self.validated:
                self.validated[id(doc)] = (doc, validate_documents([doc], memo=parses))
            found.extend(self.validated[id(doc)][1])
        return found


@dataclass
class RepositoryLoader:
    """Loads one checkout (`tree`) plus mapped other repositories into a `CheckContext`."""

    tree: TreeReader
    self_urls: frozenset[str]
    other_trees: Mapping[str, TreeReader] = field(default_factory=dict)
    custom_health: frozenset[str] = frozenset()
    external_templates: frozenset[str] = frozenset()
    drill: DrillEngine | None = drill_gate
    drill_settings: DrillSettings = field(default_factory=DrillSettings)
    base_crds: tuple[Document, ...] = ()
    memo: RenderMemo | None = None
    # Documents parsed in earlier runs, by the bytes' hash (`headway check`; None: parse all).
    parse_cache: ParseCache | None = None
    # What validation said in earlier runs of documents whose file is unchanged (with the
    # parse cache; None: validate every document).
    validation_answers: DrillAnswers | None = None
    plugins: PluginCatalog = field(default_factory=PluginCatalog)
    # The typed views validation builds, shared with the rules (the drill reads Rollouts).
    parses: ParseMemo = field(default_factory=ParseMemo)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    run_time_only: list[Diagnostic] = field(default_factory=list)  # sets check cannot render
    _parsed: dict[tuple[int, str], LoadResult] = field(default_factory=dict)
    _listing: dict[int, list[str]] = field(default_factory=dict)

    def files_under(self, tree: TreeReader, path: str) -> list[str]:
        """`tree.files(path)` answered from one listing of the whole tree per tree."""
        if id(tree) not in self._listing:
            self._listing[id(tree)] = tree.files()
        listing = self._listing[id(tree)]
        if not path:
            return listing
        prefix = f"{path}/"
        start = bisect.bisect_left(listing, prefix)
        end = bisect.bisect_left(listing, prefix + "\U0010ffff", lo=start)
        return listing[start:end]

    def parse(self, tree: TreeReader, path: str) -> LoadResult:
        key = (id(tree), path)
        if key not in self._parsed:
            result = self._parse_shared(tree, path)
            self._parsed[key] = result
            if tree is self.tree:
                self.diagnostics.extend(result.diagnostics)
        return self._parsed[key]

    def _parse_shared(self, tree: TreeReader, path: str) -> LoadResult:
        memo_key = None
        if self.memo is not None:
            try:
                memo_key = (tree.object_id(path), path)
            except SourceError:
                memo_key = None
            if memo_key is not None and memo_key in self.memo.parses:
                return self.memo.parses[memo_key]
        try:
            data = tree.read(path)
        except SourceError:
            data = b""
        if self.parse_cache is not None:
            result = self.parse_cache.load_documents(data, path)
        else:
            result = load_documents(data.decode("utf-8", errors="replace"), path)
        if self.memo is not None and memo_key is not None:
            self.memo.parses[memo_key] = result
        return result

    def manifest_files(self) -> list[str]:
        """Manifest files of the checkout, leaving out Helm chart contents and tool config."""
        return manifest_files(self.files_under(self.tree, ""))

    def with_tree(self, tree: TreeReader) -> RepositoryLoader:
        """The same loader (URLs, other repositories, health) over another tree."""
        return replace(self, tree=tree, diagnostics=[], _parsed={}, _listing={})

    def render_app(self, app: Document) -> tuple[Document, ...] | None:
        """What `app` renders from this loader's trees, or None when the render fails."""
        rendered = self._render_app(app)
        return None if rendered.problems else rendered.objects

    def load(self) -> CheckContext:
        """Every Application rendered, plus the unowned plain manifests."""
        with paused_gc():  # node trees stay alive; collections would rescan them all
            return self._load()

    def _load(self) -> CheckContext:
        scanned = [d for f in self.manifest_files() for d in self.parse(self.tree, f).documents]
        documents = [d for d in scanned if _is_object(d)]
        apps: dict[tuple[str, str], Document] = {}
        queue = [d for d in documents if _is_application(d)]
        queue.extend(self._generated_applications(documents))
        units: list[AppUnit] = []
        repeated: list[tuple[Document, Document]] = []
        unresolved: list[UnresolvedSource] = []
        owned: set[str] = set()
        left_out: set[str] = set()
        unsure: set[str] = set()
        libraries: dict[str, tuple[str, ...]] = {}
        while queue:
            app = queue.pop(0)
            key = (namespace_of(app.obj), name_of(app.obj))
            if key in apps:
                if _defined_again(apps[key], app, documents):
                    repeated.append((apps[key], app))
                continue
            apps[key] = app
            rendered = self._render_app(app)
            owned.update(rendered.owned)
            left_out.update(rendered.left_out)
            unsure.update(rendered.unsure)
            unresolved.extend(rendered.problems)
            libraries[app.name] = rendered.library
            units.append(AppUnit(app.name, app, rendered.objects))
            queue.extend(d for d in rendered.objects if _is_application(d))
            queue.extend(self._generated_applications(list(rendered.objects)))  # app-of-appsets
        skipped = left_out - owned - unsure  # Argo CD never applies these files
        plain = tuple(
            d
            for d in documents
            if d.file not in owned and d.file not in skipped and not _is_application(d)
        )
        if plain:
            units.append(AppUnit("", None, plain))
        # An Application in a skipped file is still one the check renders: it is validated.
        validated = [d for d in scanned if d.file not in skipped or _is_application(d)]
        self._add_validation_errors([*validated, *(d for u in units for d in u.objects)])
        return CheckContext(
            units=tuple(units),
            unresolved=tuple(unresolved),
            custom_health=self.custom_health,
            base_crds=self.base_crds,
            library_paths=libraries,
            load_problems=tuple(self.diagnostics),
            run_time_sets=tuple(self.run_time_only),
            external_templates=self.external_templates,
            drill=self.drill,
            drill_settings=self.drill_settings,
            parses=self.parses,
            repeated_applications=tuple(repeated),
        )

    def _generated_applications(self, documents: list[Document]) -> list[Document]:
        """The Applications of the repository's ApplicationSets, their lines those of the
        templates; git generators read this checkout (or a mapped repository) whatever their
        revision, the clusters generator the cluster Secrets the repository holds."""
        if not any(map(is_application_set, documents)):
            return []  # nothing to render (the common case for an app's own objects)
        # Here, not at the top: the generators' inputs module imports the Git cache (pygit2)
        # and the HTTP client, which a repository without ApplicationSets never needs.
        from headway.controllers.appset.inputs import TreeInputs

        inputs = TreeInputs(tree_for=self.generator_tree, secrets=cluster_secrets_in(documents))
        # A repository not at hand is an error, as an Application's unresolved source is
        # (HW002): the generated Applications would go unchecked.
        rendered = render_documents(documents, inputs, missing_inputs=Severity.ERROR)
        self.diagnostics.extend(rendered.diagnostics)
        self.run_time_only.extend(rendered.run_time_only)
        return list(rendered.applications)

    def generator_tree(self, url: str, revision: str) -> TreeReader:
        """The tree a git generator reads: this checkout or a mapped repository (whatever
        the revision); `InputUnavailable` for any other repository."""
        tree = self._tree_for(url)
        if tree is None:
            raise InputUnavailable(
                f"repository {url!r} is not available: neither this repository nor mapped to "
                "a local path (.headway/check.yaml or headway-check.yaml), so this "
                "ApplicationSet was not rendered"
            )
        return tree

    def _add_validation_errors(self, documents: list[Document]) -> None:
        """What `headway validate` rejects in the scanned and rendered objects (each once:
        an object Kustomize rendered from a scanned file has no line of its own, so its
        problem is the scan's, at the scan's line)."""
        unique = list({id(d): d for d in documents}.values())
        seen = {(d.file, d.kind, d.name, d.field, d.message) for d in self.diagnostics}
        if self.memo:
            problems = self.memo.validate(unique, self.parses)
        elif self.parse_cache is not None and self.validation_answers is not None:
            from headway.cli.check_validation import validate_with_answers

            problems = validate_with_answers(
                unique,
                parses=self.parses,
                parse_cache=self.parse_cache,
                answers=self.validation_answers,
            )
        else:
            problems = validate_documents(unique, memo=self.parses)
        for problem in problems:
            key = (problem.file, problem.kind, problem.name, problem.field, problem.message)
            if problem.severity is Severity.ERROR and key not in seen:
                seen.add(key)
                self.diagnostics.append(problem)

    def _render_app(self, app: Document) -> _AppRender:
        objects: list[Document] = []
        problems: list[UnresolvedSource] = []
        files: set[str] = set()
        left_out: set[str] = set()
        unsure: set[str] = set()
        library: list[str] = []
        for index, source in enumerate(app_sources(app.obj)):
            if source.get("ref") and not source.get("path") and not source.get("chart"):
                continue  # a values-only source renders nothing by itself
            tree = self._tree_for(str(source.get("repoURL", "")))
            if tree is None:
                reason = (
                    f"source {index} of Application/{app.name} comes from "
                    f"{source.get('repoURL')!r}, which is neither this repository nor mapped to "
                    f"a local path{_placeholder_note(source.get('repoURL'))}: its manifests were "
                    "not checked"
                )
                problems.append(UnresolvedSource(app, index, reason))
                continue
            outcome = self._render_source(tree, source, app)
            if outcome.problem:
                problems.append(UnresolvedSource(app, index, outcome.problem))
            objects.extend(outcome.documents)
            library.extend(outcome.library_paths)
            if tree is self.tree:
                files.update(outcome.files)
                if not outcome.problem:  # a base the render read is not a plain manifest
                    files.update(self._files_of_library(outcome.library_paths))
                left_out.update(outcome.left_out)
                unsure.update(outcome.unsure)
        return _AppRender(tuple(objects), problems, files, tuple(library), left_out, unsure)

    def _tree_for(self, url: str) -> TreeReader | None:
        clean = normalize_url(url)
        if clean in self.self_urls:
            return self.tree
        return self.other_trees.get(clean)

    def _render_source(
        self, tree: TreeReader, source: Mapping[str, object], app: Document
    ) -> RenderOutcome:
        """What `headway serve` would render: the same request through the same renderer."""
        destination = as_dict(as_dict(as_dict(app.obj).get("spec")).get("destination"))
        refs = {
            str(s["ref"]): ref_tree
            for s in app_sources(app.obj)
            if s.get("ref") and (ref_tree := self._tree_for(str(s.get("repoURL", "")))) is not None
        }
        request = RenderRequest(
            source=cast(ApplicationSource, dict(source)),
            tree=tree,
            app_name=app.name,
            namespace=str(destination.get("namespace") or ""),
            refs=refs,
            project=str(as_dict(as_dict(app.obj).get("spec")).get("project") or ""),
            plugins=self.plugins,
        )
        try:
            result = self._render(request, tree)
        except SourceError as err:
            return RenderOutcome(
                problem=f"Application/{app.name}: {err}",
                unsure=self._files_of_source(tree, request),
            )
        problem = "; ".join(str(d) for d in self._new_errors(result))
        owned = self._owned_files(tree, request.path, result)
        under = self._files_of_path(tree, request.path)
        return RenderOutcome(
            documents=result.documents,
            files=owned,
            problem=problem,
            library_paths=tuple(library_paths(tree, request.path)),
            left_out=() if problem else tuple(sorted(set(under) - set(owned))),
            unsure=under if problem else (),
        )

    def _files_of_source(self, tree: TreeReader, request: RenderRequest) -> tuple[str, ...]:
        """`_files_of_path` of a source whose path may itself be the error (none then: a path
        leaving the repository holds no file of it)."""
        try:
            return self._files_of_path(tree, request.path)
        except SourceError:
            return ()

    def _files_of_library(self, paths: tuple[str, ...]) -> set[str]:
        """The checkout's files a render read outside its path (`library_paths`: a Kustomize
        `../base`, a Helm `file://` chart): owned by the Application, not plain manifests."""
        found: set[str] = set()
        for path in paths:
            if self.tree.kind(path) == "file":
                found.add(path)
            else:
                found.update(self._files_of_path(self.tree, path))
        return found

    def _files_of_path(self, tree: TreeReader, path: str) -> tuple[str, ...]:
        """Every file of this checkout under a source's `path` (none for other trees)."""
        if tree is not self.tree or tree.kind(path) != "dir":
            return ()
        return tuple(self.files_under(tree, path))

    def _render(self, request: RenderRequest, tree: TreeReader) -> RenderResult:
        renderer = self._renderer(request, tree)
        if self.memo is None:
            return renderer.render(request)
        key = render_key(renderer, request)
        if key not in self.memo.renders:
            self.memo.renders[key] = renderer.render(request)
            self.memo.rendered += 1
        return self.memo.renders[key]

    def _renderer(self, request: RenderRequest, tree: TreeReader) -> Renderer:
        """The renderer serve would choose; a directory one reads files through `parse`."""
        renderer = choose_renderer(request)
        if isinstance(renderer, DirectoryRenderer):
            return DirectoryRenderer(load_file=partial(self._manifest_file, tree))
        return renderer

    def _manifest_file(
        self, tree: TreeReader, file: str, data: bytes
    ) -> tuple[list[Document], list[Diagnostic]]:
        """`load_manifest_file`, reusing the scan's parse of plain UTF-8 files."""
        if data.startswith(codecs.BOM_UTF8):
            return load_manifest_file(file, data)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return load_manifest_file(file, data)
        return manifest_objects(file, text, self.parse(tree, file))

    def _owned_files(self, tree: TreeReader, path: str, result: RenderResult) -> tuple[str, ...]:
        """Files of this checkout the render accounts for: those a directory render chose,
        everything under a tool's path."""
        if tree is not self.tree:
            return ()
        if result.renderer == "Directory":
            return result.files
        return self._files_of_path(tree, path)

    def _new_errors(self, result: RenderResult) -> list[Diagnostic]:
        """The render's errors, less the YAML errors the checkout scan already reports."""
        if all(d.severity is not Severity.ERROR for d in result.diagnostics):
            return []  # most renders: nothing to compare with the scan's problems
        known = {(d.file, d.line) for d in self.diagnostics}
        return [
            d
            for d in result.diagnostics
            if d.severity is Severity.ERROR and (d.file, d.line) not in known
        ]


def cluster_secrets_in(documents: list[Document]) -> list[ClusterSecret]:
    """The Argo CD cluster Secrets among the repository's manifests, as generators see them."""
    out: list[ClusterSecret] = []
    for doc in documents:
        if doc.kind != "Secret" or not is_cluster_secret(as_dict(doc.obj)):
            continue
        try:
            parsed = parse_cluster_secret(as_dict(doc.obj))
        except ClusterSecretError:
            continue  # validate reports what the Secret lacks
        meta = as_dict(as_dict(doc.obj).get("metadata"))
        labels = {str(k): str(v) for k, v in as_dict(meta.get("labels")).items()}
        annotations = {str(k): str(v) for k, v in as_dict(meta.get("annotations")).items()}
        out.append(ClusterSecret(parsed.name, parsed.server, parsed.project, labels, annotations))
    return sorted(out, key=lambda c: c.name)


def _defined_again(kept: Document, other: Document, scanned: list[Document]) -> bool:
    """Whether `other` is a second definition of `kept`'s Application: in another file, or
    another document of the same file (not an app-of-apps' rendered copy of the file, which
    may be the very document the scan parsed: the parse cache hands both the same object)."""
    if kept.file != other.file:
        return True
    if other is kept:
        return False
    return any(d is kept for d in scanned) and any(d is other for d in scanned)


def _is_object(doc: Document) -> bool:
    """A Kubernetes object (not a values file, not a kustomization)."""
    obj = doc.obj
    if not isinstance(obj, dict) or not obj.get("kind") or not obj.get("apiVersion"):
        return False
    return not str(obj.get("apiVersion")).startswith("kustomize.config.k8s.io")


def _placeholder_note(url: object) -> str:
    """Why a repoURL still holding `{{...}}` reached the render: an ApplicationSet's
    fasttemplate leaves a placeholder its parameters lack as it is, as Argo CD does (a cluster
    Secret without the annotation the template names)."""
    if "{{" not in str(url):
        return ""
    return (
        " (an ApplicationSet placeholder left as written: the generator's parameters have no "
        "such key, and Argo CD would leave it too)"
    )


def _is_application(doc: Document) -> bool:
    return (
        doc.kind == "Application"  # first: the kind is read once per document
        and _is_object(doc)
        and group_of(as_dict(doc.obj).get("apiVersion")) == "argoproj.io"
    )


def collect_crds(
    tree: TreeReader, *, candidates: tuple[str, ...] | None = None
) -> tuple[Document, ...]:
    """CustomResourceDefinitions written as plain files in `tree` (a cheap scan by content),
    read from `candidates` when an earlier scan of the same tree found them."""
    from headway.cli.check_crd_scans import crd_candidates

    found: list[Document] = []
    for file in crd_candidates(tree) if candidates is None else candidates:
        text = tree.read(file).decode("utf-8", errors="replace")
        result = load_documents(text, file)
        found.extend(d for d in result.documents if d.kind == "CustomResourceDefinition")
    return tuple(found)
