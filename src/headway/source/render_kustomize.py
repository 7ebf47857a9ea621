"""Kustomize apps rendered by the real `kubectl kustomize` (the `kustomize` extra).

The repository tree is written to a temporary directory (a kustomization may reach `../base`
anywhere in the repository). The Application's `kustomize` overrides are then applied to the
copy of the kustomization file, with the effect Argo CD's `kustomize edit set/add` commands
have: `images` (set by image name), `replicas` (set by name), `namePrefix`, `nameSuffix`,
`namespace`, `patches` and `components` (appended), `commonLabels` and `commonAnnotations` (an
existing key is an error unless `forceCommonLabels` / `forceCommonAnnotations`, as in
`kustomize edit add`; with `commonAnnotationsEnvsubst` the annotation values expand `$VAR`
from the render's `ARGOCD_APP_*` variables). Any other `kustomize` field is an error, never
silently ignored.

Each object's file is where kustomize read it from: Headway asks kustomize for origin
annotations (`buildMetadata: [originAnnotations]`), maps them to repository paths and removes
them again. Kustomize does not report lines, so lines are 1.
"""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from headway.model import yamlload
from headway.model.diagnostics import Diagnostic, Severity
from headway.model.support import refused_source_fields
from headway.model.yamlload import Document, load_documents
from headway.source.build_env import build_environment, envsubst
from headway.source.errors import PathNotFound, RenderError
from headway.source.render import KUSTOMIZATION_FILES, RenderRequest, RenderResult
from headway.source.spec import spec_section
from headway.source.tools import find_kustomize
from headway.source.tree import EscapingLink, normalize_path

__all__ = ["KustomizeRenderer", "apply_overrides", "parse_image_override"]

_ORIGIN = "config.kubernetes.io/origin"


def parse_image_override(text: str) -> dict[str, str]:
    """`name=new:tag`, `name:tag`, `name@sha256:...`, `name=new` -> a kustomize images entry."""
    name, _, target = text.partition("=")
    reference = target or name
    entry: dict[str, str] = {}
    base, _, digest = reference.partition("@")
    tag = ""
    if ":" in base.rsplit("/", 1)[-1]:
        base, _, tag = base.rpartition(":")
    if not target:
        name = base
    elif base and base != name:
        entry["newName"] = base
    if digest:
        entry["digest"] = digest
    elif tag:
        entry["newTag"] = tag
    return {"name": name, **entry}


def _set_image(images: list[dict[str, Any]], override: dict[str, str]) -> None:
    for entry in images:
        if entry.get("name") == override["name"]:
            if "digest" in override:
                entry.pop("newTag", None)
            if "newTag" in override:
                entry.pop("digest", None)
            entry.update(override)
            return
    images.append(dict(override))


def _add_map(kustomization: dict[str, Any], key: str, added: dict[str, str], force: bool) -> None:
    current = dict(kustomization.get(key) or {})
    for name, value in added.items():
        if name in current and not force:
            raise RenderError(
                f"kustomize.{key}: {name!r} is already set in the kustomization "
                f"(set kustomize.force{key[0].upper()}{key[1:]} to override it, as Argo CD does)"
            )
        current[name] = str(value)
    kustomization[key] = current


def _set_replicas(out: dict[str, Any], replicas: list[Any]) -> None:
    current = [dict(r) for r in out.get("replicas") or []]
    for override in replicas:
        if not isinstance(override, dict) or not override.get("name"):
            raise RenderError("kustomize.replicas: every entry needs a name and a count")
        entry = {"name": str(override["name"]), "count": int(override.get("count", 0))}
        current = [r for r in current if r.get("name") != entry["name"]] + [entry]
    out["replicas"] = current


def apply_overrides(
    kustomization: dict[str, Any], spec: dict[str, Any], env: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The kustomization with the Application's `kustomize` overrides applied; with
    `commonAnnotationsEnvsubst`, `$VAR` in commonAnnotations values expand from `env` (the
    render's `ARGOCD_APP_*` variables), as in Argo CD.

    An override Headway does not apply is an error rather than silently ignored.
    """
    refused = refused_source_fields("kustomize", spec)
    if refused:
        raise RenderError(refused)
    out = dict(kustomization)
    for key in ("namePrefix", "nameSuffix", "namespace"):
        if spec.get(key):
            out[key] = str(spec[key])
    if spec.get("images"):
        images = [dict(i) for i in out.get("images") or []]
        for text in spec["images"]:
            _set_image(images, parse_image_override(str(text)))
        out["images"] = images
    if spec.get("replicas"):
        _set_replicas(out, spec["replicas"])
    for key in ("patches", "components"):  # appended, as Argo CD does
        if spec.get(key):
            out[key] = [*(out.get(key) or []), *spec[key]]
    if spec.get("commonLabels"):
        _add_map(out, "commonLabels", spec["commonLabels"], bool(spec.get("forceCommonLabels")))
    if spec.get("commonAnnotations"):
        force = bool(spec.get("forceCommonAnnotations"))
        added = dict(spec["commonAnnotations"])
        if spec.get("commonAnnotationsEnvsubst") is True:
            added = {name: envsubst(str(value), env or {}) for name, value in added.items()}
        _add_map(out, "commonAnnotations", added, force)
    return out


def _kustomization_file(request: RenderRequest) -> str:
    for name in KUSTOMIZATION_FILES:
        path = f"{request.path}/{name}" if request.path else name
        if request.tree.kind(path) == "file":
            return path
    raise RenderError(f"no kustomization file in {request.path or '/'!r}", request.path)


def _prepare(root: Path, kfile: str, spec: dict[str, Any], env: Mapping[str, str]) -> None:
    target = root / kfile
    try:
        loaded = yamlload.load_one(target.read_text())
    except yaml.YAMLError as err:
        problem = getattr(err, "problem", None) or str(err)
        raise RenderError(f"invalid YAML: {problem}", kfile) from None
    if not isinstance(loaded, dict):
        raise RenderError("the kustomization is not a mapping", kfile)
    edited = apply_overrides(loaded, spec, env)
    metadata = list(edited.get("buildMetadata") or [])
    edited["buildMetadata"] = [*metadata, "originAnnotations"]
    target.write_text(yaml.safe_dump(edited, sort_keys=False))


def _origin_file(obj: dict[str, Any], kdir: str, fallback: str) -> str:
    meta = obj.get("metadata") or {}
    annotations = meta.get("annotations") or {}
    raw = annotations.pop(_ORIGIN, None)
    if not annotations:
        meta.pop("annotations", None)
    try:
        origin = yamlload.load_one(raw) if isinstance(raw, str) else None
    except yaml.YAMLError:
        return fallback
    if not isinstance(origin, dict) or origin.get("repo"):
        return fallback
    path = origin.get("path") or origin.get("configuredIn")
    if not isinstance(path, str):
        return fallback
    try:
        return normalize_path(f"{kdir}/{path}")
    except PathNotFound:  # a base outside the repository
        return fallback


def _refuse_own_links(escaping: tuple[EscapingLink, ...], app_path: str) -> None:
    """A link leaving the repository inside the app's own directory fails this app only."""
    for link in escaping:
        if link.within(app_path):
            raise RenderError(link.message, link.path)


def _refuse_reached_links(escaping: tuple[EscapingLink, ...], message: str) -> None:
    """When the build failed on a path that is a left-out link (a base elsewhere in the
    repository), say that the link is the cause, not that a file is missing."""
    for link in escaping:
        if re.search(rf"(^|[^\w.-]){re.escape(link.path)}($|[^\w.-])", message):
            raise RenderError(f"{link.message} (kustomize: {message})", link.path)


class KustomizeRenderer:
    name = "Kustomize"

    def inputs(self, request: RenderRequest) -> tuple[str, ...]:
        """The repository's content; with `commonAnnotationsEnvsubst`, also the build
        environment the annotations expand from (it holds the revision and project)."""
        spec = spec_section(request.source, "kustomize")
        if spec.get("commonAnnotationsEnvsubst") is True and spec.get("commonAnnotations"):
            environment = json.dumps(build_environment(request), sort_keys=True)
            return (request.tree.object_id(""), environment)
        return (request.tree.object_id(""),)

    def render(self, request: RenderRequest) -> RenderResult:
        kfile = _kustomization_file(request)
        command = find_kustomize()
        spec = spec_section(request.source, "kustomize")
        with tempfile.TemporaryDirectory(prefix="headway-kustomize-") as tmp:
            root = Path(tmp)
            # The whole repository: a kustomization may reach `../base` anywhere in it.
            escaping = request.tree.materialize(root)
            _refuse_own_links(escaping, request.path)
            _prepare(root, kfile, spec, build_environment(request))
            argv = command.build(str(root / request.path) if request.path else str(root))
            done = subprocess.run(
                argv, cwd=root, capture_output=True, text=True, check=False, timeout=120
            )
        if done.returncode != 0:
            message = done.stderr.strip().replace(f"{tmp}/", "").replace(tmp, ".")
            _refuse_reached_links(escaping, message)
            raise RenderError(f"kustomize build failed: {message}", kfile)
        return self._result(done.stdout, done.stderr, request.path, kfile)

    def _result(self, text: str, stderr: str, kdir: str, kfile: str) -> RenderResult:
        loaded = load_documents(text, kfile)
        documents: list[Document] = []
        diagnostics: list[Diagnostic] = list(loaded.diagnostics)
        for line in stderr.splitlines():  # kustomize's own warnings (deprecated fields, ...)
            message = line.removeprefix("# ").removeprefix("Warning: ").strip()
            if message:
                diagnostics.append(Diagnostic(kfile, 1, "", "", "", Severity.WARNING, message))
        for index, doc in enumerate(loaded.documents):
            if not isinstance(doc.obj, dict):
                message = "kustomize produced a document that is not an object"
                diagnostics.append(Diagnostic(kfile, 1, "", "", "", Severity.ERROR, message))
                continue
            file = _origin_file(doc.obj, kdir, kfile)
            documents.append(Document(doc.obj, file, index, 1))
        return RenderResult(self.name, tuple(documents), tuple(diagnostics))
