"""One interface over the renderers, chosen by Argo CD's rules, with an LRU render cache.

Choice (Argo CD's `GetAppSourceType`): a `chart` field means Helm; otherwise exactly one of the
`helm` / `kustomize` / `directory` / `plugin` sections names the type (two or more is an
error); otherwise a config management plugin whose discover rules match the app takes it (as
Argo CD asks its sidecars first); otherwise the files at the top of `path` decide: a
kustomization file means Kustomize, a `Chart.yaml` means Helm, anything else is a directory of
manifests.

A render result is a pure function of its inputs, so it is cached under the content ids of every
tree or file it read (Git object ids) plus the render parameters.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Protocol

from headway.model.diagnostics import Diagnostic, Severity
from headway.model.yamlload import Document
from headway.source.errors import RenderError
from headway.source.plugins import PluginCatalog
from headway.source.spec import ApplicationSource
from headway.source.tree import TreeReader, normalize_path

if TYPE_CHECKING:
    from headway.source.helm_dependencies import ChartFetcher

__all__ = [
    "KUSTOMIZATION_FILES",
    "Chosen",
    "RenderCache",
    "RenderRequest",
    "RenderResult",
    "Renderer",
    "choose",
    "choose_renderer",
    "render",
    "render_key",
]

KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")


@dataclass(frozen=True)
class RenderRequest:
    """One Application source to render from a Git tree at a resolved commit.

    `tree` is the repository root; `refs` maps a multi-source `ref` name to the root of the
    referenced source, for Helm `$name/...` value files. `namespace` is the destination
    namespace (Helm's `.Release.Namespace` unless `helm.namespace` overrides it). `revision`
    (the resolved commit) and `project` feed Argo CD's build environment
    (`headway.source.build_env`), which Jsonnet values can name. `field_lines=False` says no
    one will ask a rendered document for a field's line, so plain manifest files are read
    with the fast loader (`yamlload.load_documents_fast`).
    """

    source: ApplicationSource
    tree: TreeReader
    app_name: str
    namespace: str = ""
    refs: Mapping[str, TreeReader] = field(default_factory=dict)
    revision: str = ""
    project: str = ""
    field_lines: bool = True
    # The config management plugins this render may run (`headway.source.plugins`).
    plugins: PluginCatalog = field(default_factory=PluginCatalog)
    # Where a Helm chart's dependencies from Helm repositories come from (the controller's
    # `HelmCharts`); None where rendering stays offline (`headway check`).
    charts: ChartFetcher | None = field(default=None, compare=False, repr=False)

    @cached_property
    def path(self) -> str:
        """The source's path, normalized once (a render asks for it a dozen times); a path
        leaving the repository raises `PathNotFound` on every ask."""
        return normalize_path(str(self.source.get("path") or ""))


@dataclass(frozen=True)
class RenderResult:
    """Rendered objects, each with the file it came from, and what went wrong on the way."""

    renderer: str
    documents: tuple[Document, ...]
    diagnostics: tuple[Diagnostic, ...] = ()
    # The files a directory render chose (rendered or skipped by marker); empty for tools.
    files: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """False when any diagnostic is an error: such a render must not be synced."""
        return all(d.severity is not Severity.ERROR for d in self.diagnostics)


class Renderer(Protocol):
    """Turns one source into objects. Raises `RenderError` when nothing can be rendered."""

    name: str

    def inputs(self, request: RenderRequest) -> tuple[str, ...]:
        """Content ids of everything `render` reads (its share of the cache key)."""
        ...

    def render(self, request: RenderRequest) -> RenderResult: ...


_SECTIONS = (
    ("kustomize", "Kustomize"),
    ("helm", "Helm"),
    ("directory", "Directory"),
    ("plugin", "Plugin"),
)


def source_type(request: RenderRequest) -> str:
    """The source type ("Helm", "Kustomize", "Plugin" or "Directory") by Argo CD's rules."""
    source = request.source
    if source.get("chart"):
        return "Helm"
    explicit = [kind for key, kind in _SECTIONS if source.get(key) is not None]
    if len(explicit) > 1:
        raise RenderError(f"multiple application sources defined: {', '.join(explicit)}")
    if explicit:
        return explicit[0]
    if request.tree.kind(request.path) != "dir":
        where = request.tree.description
        raise RenderError(f"app path {request.path or '/'!r} does not exist in {where}")
    if request.plugins.discovering and _discovered(request):
        return "Plugin"
    names = set(request.tree.names(request.path))
    if names & set(KUSTOMIZATION_FILES):
        return "Kustomize"
    if any(name.endswith("Chart.yaml") for name in names):
        return "Helm"
    return "Directory"


def _discovered(request: RenderRequest) -> bool:
    from headway.source import plugin_selection, render_plugin

    found = plugin_selection.discover_plugin(
        request.plugins,
        tree=request.tree,
        path=request.path,
        run_find=render_plugin.find_runner(request),
    )
    return found is not None


def choose_renderer(request: RenderRequest) -> Renderer:
    """The renderer of the request's source type; only its module is imported (a repository
    of plain directories never loads Helm's, Kustomize's or the plugins')."""
    kind = source_type(request)
    if kind == "Plugin":
        from headway.source import render_plugin

        return render_plugin.PluginRenderer(request.plugins)
    if kind == "Helm":
        from headway.source import render_helm

        return render_helm.HelmRenderer()
    if kind == "Kustomize":
        from headway.source import render_kustomize

        return render_kustomize.KustomizeRenderer()
    from headway.source import render_directory

    return render_directory.DirectoryRenderer()


@dataclass(frozen=True)
class Chosen:
    """A request's renderer and the content ids it reads (`Renderer.inputs`): what a render
    is keyed by, found once where a caller needs it for its own key too."""

    renderer: Renderer
    inputs: tuple[str, ...]


def choose(request: RenderRequest) -> Chosen:
    """`choose_renderer` and that renderer's inputs for `request`."""
    renderer = choose_renderer(request)
    return Chosen(renderer, renderer.inputs(request))


def render(request: RenderRequest) -> RenderResult:
    """Render without caching."""
    return choose_renderer(request).render(request)


class RenderCache:
    """An in-memory LRU of render results keyed by input content ids and parameters."""

    def __init__(self, max_entries: int = 256) -> None:
        self._max = max_entries
        self._entries: OrderedDict[str, RenderResult] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def render(self, request: RenderRequest, chosen: Chosen | None = None) -> RenderResult:
        """The render of `request`, from the cache when its key was rendered before;
        `chosen` is `choose(request)` where the caller has it already."""
        chosen = chosen or choose(request)
        renderer = chosen.renderer
        key = render_key(renderer, request, chosen.inputs)
        with self._lock:
            cached = self._entries.get(key)
            if cached is not None:
                self._entries.move_to_end(key)
                self.hits += 1
                return cached
        result = _without_node_trees(renderer.render(replace(request, field_lines=False)))
        with self._lock:
            self.misses += 1
            self._entries[key] = result
            self._entries.move_to_end(key)
            while len(self._entries) > self._max:
                self._entries.popitem(last=False)
        return result

    def __len__(self) -> int:
        return len(self._entries)


def _without_node_trees(result: RenderResult) -> RenderResult:
    """`result` with each document's field lines let go (its file's text, and the YAML node
    trees composed once a line was asked for; field lines then fall back to the document's
    line). A cached render only feeds comparisons, which never ask for a field's line; node
    trees held most of its memory, and every garbage collection rescanned them
    (bench/bench_refresh.py, bench/bench_scale.py). Directory renders asked for no field
    lines hold none already; Helm and Kustomize output is read with field lines."""
    if not any(d.has_field_lines for d in result.documents):
        return result
    documents = tuple(d.without_field_lines() for d in result.documents)
    return replace(result, documents=documents)


def render_key(
    renderer: Renderer, request: RenderRequest, inputs: tuple[str, ...] | None = None
) -> str:
    """What a render depends on: the renderer, the render parameters and its inputs' ids
    (`inputs`: `renderer.inputs(request)`, where the caller has them)."""
    parameters = {
        "renderer": renderer.name,
        # Where the content came from does not matter once its object ids are in `inputs`.
        "source": {
            k: v for k, v in request.source.items() if k not in ("repoURL", "ref", "targetRevision")
        },
        "app": request.app_name,
        "namespace": request.namespace,
        "inputs": renderer.inputs(request) if inputs is None else inputs,
    }
    return json.dumps(parameters, sort_keys=True, default=str)
