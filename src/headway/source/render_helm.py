"""Helm charts from Git, rendered like Argo CD's `helm template`.

Through the Helm SDK (`helm-python-sdk`, the `helm` extra) when installed, else the `helm`
program on PATH. Release name: `helm.releaseName`, else the Application name; namespace:
`helm.namespace`, else the destination namespace; CRDs from `crds/` are included unless
`helm.skipCrds`. Each object's file is its template's path in the repository
(`charts/checkout/templates/rollout.yaml`, the `# Source:` path with the chart directory
in place of the chart name); lines are lines of the rendered template output.

Dependencies vendored in `charts/` are used as they are; `file://` dependencies (a library chart
elsewhere in the repository) are packaged into `charts/` of the temporary copy first, as Argo CD's
`helm dependency build` does. A dependency from a Helm repository that is not vendored is
fetched when the request carries a chart fetcher (the controller's, `headway.source.
helm_dependencies`); where rendering stays offline (`headway check`) it is an error (Helm would
otherwise silently render without it).
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from headway.model import yamlload
from headway.model.diagnostics import Diagnostic, Severity
from headway.model.support import refused_source_fields
from headway.model.yamlload import Document, load_documents
from headway.source.chart_cache import ChartTree
from headway.source.errors import PathNotFound, RenderError
from headway.source.helm_dependencies import vendor_dependencies
from headway.source.helm_values import ComposedValues, ValueFile, compose_values, merge_maps
from headway.source.helm_values import resolve_value_files as _resolve_value_files
from headway.source.render import RenderRequest, RenderResult
from headway.source.spec import spec_section
from headway.source.tools import find_helm_binary, helm_sdk_available
from headway.source.tree import GitTree, TreeReader, normalize_path

__all__ = ["HelmRenderer", "split_helm_output"]

_SOURCE_LINE = re.compile(r"^# Source: (.+)$", re.MULTILINE)


def split_helm_output(text: str) -> dict[str, str]:
    """`helm template` output -> {template path: its documents}, by the `# Source:` comments."""
    out: dict[str, str] = {}
    for chunk in re.split(r"^---[ \t]*$", text, flags=re.MULTILINE):
        match = _SOURCE_LINE.search(chunk)
        if match is None or not chunk.strip():
            continue
        name = match.group(1).strip()
        out[name] = f"{out[name]}---\n{chunk.lstrip()}" if name in out else chunk.lstrip()
    return out


def _local_dependencies(tree: TreeReader, chart_path: str) -> list[str]:
    """Repository paths of the `file://` dependencies of a chart, recursively."""
    found: list[str] = []
    pending = [chart_path]
    while pending:
        current = pending.pop()
        chart_yaml = f"{current}/Chart.yaml" if current else "Chart.yaml"
        if tree.kind(chart_yaml) != "file":
            if current != chart_path:
                raise RenderError(f"dependency {current!r} has no Chart.yaml", chart_yaml)
            continue
        try:
            meta = yamlload.load_one(tree.read(chart_yaml))
        except yaml.YAMLError as err:
            raise RenderError(f"invalid YAML: {err}", chart_yaml) from None
        deps = meta.get("dependencies") if isinstance(meta, dict) else None
        for dep in deps or []:
            repository = str(dep.get("repository") or "") if isinstance(dep, dict) else ""
            if not repository.startswith("file://"):
                continue
            try:
                path = normalize_path(f"{current}/{repository.removeprefix('file://')}")
            except PathNotFound:
                message = f"dependency {repository} leaves the repository"
                raise RenderError(message, chart_yaml) from None
            if path not in found:
                found.append(path)
                pending.append(path)
    return found


def _build_missing_dependencies(chart_dir: Path) -> None:
    """Package `file://` dependencies into charts/ as `helm dependency build` would (offline)."""
    import helm_python as helm

    # Several archives of one chart ("too many matches") are aliases at several versions:
    # Helm's render picks each alias's own.
    present = ("ok", "unpacked", "too many matches")
    missing = [d for d in helm.dependency_list(chart_dir) if d["status"] not in present]
    if not missing:
        return
    remote = [d for d in missing if not str(d.get("repository", "")).startswith("file://")]
    if remote:
        names = ", ".join(f"{d['name']} ({d.get('repository')})" for d in remote)
        raise RenderError(
            f"chart dependencies missing from charts/: {names}; `headway check` renders "
            "offline, so vendor them (helm dependency build) and commit charts/ (the "
            "controller fetches them from their repositories)"
        )
    helm.dependency_update(chart_dir)


def _render_with_sdk(
    chart_dir: Path,
    composed: ComposedValues,
    *,
    workdir: Path,
    release: str,
    namespace: str,
    crds: bool,
) -> dict[str, str]:
    import helm_python as helm

    values = composed.values
    try:
        for expression in composed.set_params:
            values = merge_maps(values, helm.parse_set_string(expression))
        for expression in composed.set_string_params:
            values = merge_maps(values, helm.parse_set_string_values(expression))
        _build_missing_dependencies(chart_dir)
        with helm.Chart.load(chart_dir) as chart:
            manifests = chart.render(values, name=release, namespace=namespace, is_install=True)
            if crds:
                for crd in chart.crds:
                    manifests[crd["filename"]] = crd["data"]
    except helm.HelmError as err:
        raise RenderError(f"helm template failed: {err}") from None
    return manifests


def _render_with_binary(
    chart_dir: Path,
    composed: ComposedValues,
    *,
    workdir: Path,
    release: str,
    namespace: str,
    crds: bool,
) -> dict[str, str]:
    helm = find_helm_binary()
    values_file = workdir / "values.json"
    values_file.write_text(json.dumps(composed.values))
    argv = [helm, "template", str(chart_dir), "--name-template", release, "-f", str(values_file)]
    if namespace:
        argv += ["--namespace", namespace]
    for expression in composed.set_params:
        argv += ["--set", expression]
    for expression in composed.set_string_params:
        argv += ["--set-string", expression]
    if crds:
        argv.append("--include-crds")
    if not (chart_dir / "charts").is_dir():
        update = [helm, "dependency", "build", str(chart_dir)]
        subprocess.run(update, capture_output=True, text=True, check=False, timeout=120)
    done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=120)
    if done.returncode != 0:
        raise RenderError(f"helm template failed: {done.stderr.strip()}")
    return split_helm_output(done.stdout)


def _repository_file(template: str, chart_path: str) -> str:
    """`mychart/templates/x.yaml` -> `<chart path>/templates/x.yaml`."""
    rest = template.split("/", 1)[1] if "/" in template else template
    return f"{chart_path}/{rest}" if chart_path else rest


def _documents(
    manifests: dict[str, str], chart_path: str
) -> tuple[list[Document], list[Diagnostic]]:
    documents: list[Document] = []
    diagnostics: list[Diagnostic] = []
    for template in sorted(manifests):
        if template.endswith("NOTES.txt") or not manifests[template].strip():
            continue
        file = _repository_file(template, chart_path)
        loaded = load_documents(manifests[template], file)
        diagnostics.extend(loaded.diagnostics)
        for doc in loaded.documents:
            if isinstance(doc.obj, dict) and doc.obj.get("apiVersion") and doc.obj.get("kind"):
                documents.append(doc)
                continue
            message = "rendered a document that is not a Kubernetes object (no apiVersion/kind)"
            diagnostics.append(Diagnostic(file, doc.line, "", "", "", Severity.ERROR, message))
    return documents, diagnostics


def _is_test_hook(doc: Document) -> bool:
    annotations = (doc.obj.get("metadata") or {}).get("annotations") or {}
    hooks = str(annotations.get("helm.sh/hook", ""))
    return any(h.strip().startswith("test") for h in hooks.split(","))


def _linked_inputs(tree: TreeReader, charts: list[str]) -> list[str]:
    """What the charts' symlinks lead to outside them, with its content id: Helm reads
    through them, and a Git tree's id for a chart does not move when only a link's target
    does. On disk, `object_id` already hashes what a link leads to."""
    if not isinstance(tree, GitTree):
        return []
    found: list[str] = []
    for chart in charts:
        for target in tree.links_leaving(chart, recursive=True):
            try:
                found.append(f"{target}@{tree.object_id(target)}")
            except PathNotFound:
                found.append(f"{target}@missing")
    return found


def _value_file_id(file: ValueFile) -> str:
    """What a value file's content is, read as the render reads it: through a symlink, the
    target's bytes (the link's own id does not move when its target changes)."""
    try:
        content = file.tree.read(file.path) if file.exists else None
    except PathNotFound:
        content = None
    if content is None:
        return f"missing:{file.path}"
    return "sha256:" + hashlib.sha256(content).hexdigest()


def _chart_request(request: RenderRequest) -> RenderRequest:
    """A `chart:` source as a request for the chart's directory: the root of an unpacked
    chart (`ChartTree`), or in a local checkout mapped for `headway check`, `<chart>/` when
    it has a Chart.yaml, else the root."""
    chart = str(request.source.get("chart") or "")
    if not chart:
        return request
    path = ""
    if not isinstance(request.tree, ChartTree) and request.tree.kind(f"{chart}/Chart.yaml"):
        path = chart
    return replace(request, source={**request.source, "path": path})


class HelmRenderer:
    name = "Helm"

    def inputs(self, request: RenderRequest) -> tuple[str, ...]:
        request = _chart_request(request)
        charts = [request.path, *_local_dependencies(request.tree, request.path)]
        ids = [request.tree.object_id(p) for p in charts]
        ids += _linked_inputs(request.tree, charts)
        ids += [_value_file_id(file) for file in _resolve_value_files(request)]
        return tuple(ids)

    def render(self, request: RenderRequest) -> RenderResult:
        request = _chart_request(request)
        chart_yaml = f"{request.path}/Chart.yaml" if request.path else "Chart.yaml"
        if request.tree.kind(chart_yaml) != "file":
            raise RenderError(f"no Chart.yaml in {request.tree.description}", chart_yaml)
        helm = spec_section(request.source, "helm")
        refused = refused_source_fields("helm", helm)
        if refused:
            raise RenderError(refused)
        composed = compose_values(request)
        options: dict[str, Any] = {
            "release": str(helm.get("releaseName") or request.app_name),
            "namespace": str(helm.get("namespace") or request.namespace),
            "crds": not bool(helm.get("skipCrds")),
        }
        backend = _render_with_sdk if helm_sdk_available() else _render_with_binary
        with tempfile.TemporaryDirectory(prefix="headway-helm-") as tmp:
            root = Path(tmp) / "tree"
            escaping = list(request.tree.materialize(root, request.path))
            for dependency in _local_dependencies(request.tree, request.path):
                escaping += request.tree.materialize(root, dependency)
            if escaping:  # the chart and its dependencies are this app's own files
                raise RenderError(escaping[0].message, escaping[0].path)
            chart_dir = root / request.path if request.path else root
            if request.charts is not None:
                vendor_dependencies(chart_dir, request.charts)
            manifests = backend(chart_dir, composed, workdir=Path(tmp), **options)
        # An unpacked chart's files are named as in its archive (`<chart>/templates/x.yaml`).
        tree = request.tree
        where = tree.ref.chart if isinstance(tree, ChartTree) else request.path
        documents, diagnostics = _documents(manifests, where)
        if helm.get("skipTests"):
            documents = [doc for doc in documents if not _is_test_hook(doc)]
        return RenderResult(self.name, tuple(documents), (*composed.diagnostics, *diagnostics))
