"""An ApplicationSet and its inputs -> the Applications it generates, or why it cannot. Pure.

Every generator runs, every parameter set renders the template (the generator's own
`template` filled from the set's), then `templatePatch`; the Application gets the set's
namespace and, unless `syncPolicy.preserveResourcesOnDeletion`, the resources finalizer.
The first error of any kind stops generation as a whole (`Generation.error`): the controller
then changes no Application, so a bad template edit cannot reach every generated app at once.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from headway.appset.generators import Context, GeneratorError, Params, generate_params
from headway.appset.inputs import InputError, Inputs, InputUnavailable, RunTimeOnly
from headway.appset.render import (
    RenderFailure,
    TemplateMode,
    fill_missing,
    merge_patch,
    mode_of,
    render_text,
    render_value,
)
from headway.model import schema
from headway.model.applicationset import APPLICATION_SET_SPEC
from headway.model.diagnostics import Severity
from headway.model.yamlload import Document, load_one
from headway.notify.gotemplate import TemplateError

__all__ = [
    "ARGO_API",
    "PARAMS_ERROR",
    "RENDER_ERROR",
    "RESOURCES_FINALIZER",
    "VALIDATION_ERROR",
    "GeneratedApp",
    "Generation",
    "GenerationError",
    "generate",
]

ARGO_API = "argoproj.io/v1alpha1"
RESOURCES_FINALIZER = "resources-finalizer.argocd.argoproj.io"
PARAMS_ERROR = "ApplicationGenerationFromParamsError"
RENDER_ERROR = "RenderTemplateParamsError"
VALIDATION_ERROR = "ApplicationValidationError"

PathPart = str | int


@dataclass(frozen=True)
class GeneratedApp:
    """One generated Application and where its template is in the ApplicationSet."""

    name: str
    manifest: dict[str, Any]
    template_path: tuple[PathPart, ...]


@dataclass(frozen=True)
class GenerationError:
    """Why generation stopped: Argo's reason, a message, and the field of the set to blame."""

    reason: str
    message: str
    path: tuple[PathPart, ...]
    unavailable: bool = False  # an input the reader does not have (InputUnavailable)
    run_time_only: bool = False  # ... and no reader of a repository can have (RunTimeOnly)


@dataclass(frozen=True)
class Generation:
    apps: tuple[GeneratedApp, ...] = ()
    error: GenerationError | None = None
    requeue_after: float | None = None  # seconds until a generator wants to be asked again

    @property
    def names(self) -> frozenset[str]:
        return frozenset(a.name for a in self.apps)


def generate(appset: Mapping[str, Any], inputs: Inputs) -> Generation:
    """The Applications of `appset` (a manifest) given `inputs`; an error stops them all,
    and so does a set whose own fields are malformed (the first error, by field)."""
    malformed = _malformed(appset)
    if malformed is not None:
        return Generation(error=malformed)
    spec = appset.get("spec") or {}
    mode = mode_of(spec)
    context = Context(mode, inputs, str((appset.get("metadata") or {}).get("name") or ""))
    namespace = str((appset.get("metadata") or {}).get("namespace") or "argocd")
    apps: list[GeneratedApp] = []
    for index, generator in enumerate(spec.get("generators") or []):
        path: tuple[PathPart, ...] = ("spec", "generators", index)
        try:
            params = generate_params(generator, context=context, path=path)
        except GeneratorError as err:
            return Generation(error=GenerationError(PARAMS_ERROR, err.message, err.path))
        except InputError as err:
            missing = isinstance(err, InputUnavailable)
            live = isinstance(err, RunTimeOnly)
            return Generation(
                error=GenerationError(PARAMS_ERROR, str(err), path, missing, live),
                requeue_after=requeue_after(spec.get("generators")),
            )
        template, template_path = _template_for(spec, generator, path)
        for item in params:
            try:
                manifest = _render(spec, template, item, mode, namespace)
            except RenderFailure as err:
                return Generation(
                    error=GenerationError(RENDER_ERROR, err.message, (*template_path, *err.path))
                )
            apps.append(GeneratedApp(_name(manifest), manifest, template_path))
    duplicate = _duplicate(apps)
    if duplicate:
        return Generation(error=duplicate)
    return Generation(apps=tuple(apps), requeue_after=requeue_after(spec.get("generators")))


# Generators that read a forge or a service poll it: Argo CD's defaults, in seconds.
_POLLING_DEFAULTS = {
    "pullRequest": 30 * 60.0,
    "scmProvider": 30 * 60.0,
    "plugin": 30 * 60.0,
    "clusterDecisionResource": 180.0,
}


def requeue_after(generators: Any) -> float | None:
    """The shortest `requeueAfterSeconds` of the polling generators in `generators` (matrix
    and merge children included), their default where unset; None when none polls."""
    found: list[float] = []
    for generator in generators if isinstance(generators, list) else []:
        if not isinstance(generator, Mapping):
            continue
        for kind, spec in generator.items():
            if not isinstance(spec, Mapping):
                continue
            if kind in ("matrix", "merge"):
                nested = requeue_after(spec.get("generators"))
                found.extend([] if nested is None else [nested])
            elif kind in _POLLING_DEFAULTS:
                seconds = spec.get("requeueAfterSeconds")
                if seconds == 0:
                    continue  # Argo CD: 0 asks for no polling
                valid = isinstance(seconds, int) and not isinstance(seconds, bool) and seconds > 0
                found.append(float(seconds or 0) if valid else _POLLING_DEFAULTS[kind])
    return min(found, default=None)


def _malformed(appset: Mapping[str, Any]) -> GenerationError | None:
    """The first error `headway validate` finds in the set's spec fields, if any."""
    name = str((appset.get("metadata") or {}).get("name") or "")
    document = Document(dict(appset), f"ApplicationSet/{name}", 0, 0)
    report = schema.Reporter(document)
    schema.validate_object(APPLICATION_SET_SPEC, appset.get("spec"), ("spec",), report)
    errors = [d for d in report.diagnostics if d.severity is Severity.ERROR]
    if not errors:
        return None
    first = errors[0]
    path = tuple(p for p in first.field.replace("[", ".").replace("]", "").split(".") if p)
    parts: tuple[PathPart, ...] = tuple(int(p) if p.isdigit() else p for p in path)
    return GenerationError(PARAMS_ERROR, f"{first.field}: {first.message}", parts)


def _template_for(
    spec: Mapping[str, Any], generator: Any, path: tuple[PathPart, ...]
) -> tuple[Mapping[str, Any], tuple[PathPart, ...]]:
    base = spec.get("template") or {}
    if not isinstance(generator, Mapping):
        return base, ("spec", "template")
    # Argo CD's place: inside the generator's kind (`scmProvider.template`, `list.template`)
    for kind, kind_spec in generator.items():
        nested = kind_spec.get("template") if isinstance(kind_spec, Mapping) else None
        if kind not in ("selector", "values") and isinstance(nested, Mapping) and nested:
            return fill_missing(nested, base), (*path, kind, "template")
    return base, ("spec", "template")


def _render(
    spec: Mapping[str, Any],
    template: Mapping[str, Any],
    params: Params,
    mode: TemplateMode,
    namespace: str,
) -> dict[str, Any]:
    meta = render_value(dict(template.get("metadata") or {}), params, mode, ("metadata",))
    body = render_value(dict(template.get("spec") or {}), params, mode, ("spec",))
    app: dict[str, Any] = {
        "apiVersion": ARGO_API,
        "kind": "Application",
        "metadata": _metadata(meta, namespace, spec),
        "spec": body,
    }
    patch = spec.get("templatePatch")
    if patch:
        app = _patched(app, str(patch), params, mode)
    return app


def _metadata(meta: Mapping[str, Any], namespace: str, spec: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in meta.items() if k in ("name", "labels", "annotations", "finalizers")}
    out["namespace"] = namespace
    preserve = (spec.get("syncPolicy") or {}).get("preserveResourcesOnDeletion") is True
    if not preserve and not out.get("finalizers"):
        out["finalizers"] = [RESOURCES_FINALIZER]
    return out


def _patched(app: dict[str, Any], patch: str, params: Params, mode: TemplateMode) -> dict[str, Any]:
    """`templatePatch` rendered and merged in; the project stays the template's, as in Argo."""
    where: tuple[PathPart, ...] = ("spec", "templatePatch")
    try:
        text = render_text(patch, params, mode)
    except TemplateError as err:
        raise RenderFailure(where, f"error replacing values in templatePatch: {err}") from None
    try:
        loaded = load_one(text)
    except yaml.YAMLError as err:
        raise RenderFailure(
            where, f"invalid templatePatch (not YAML after rendering): {err}"
        ) from None
    if loaded is None:
        return app
    if not isinstance(loaded, Mapping):
        raise RenderFailure(where, "invalid templatePatch: it must render to a mapping")
    patched: dict[str, Any] = merge_patch(app, loaded)
    patched.setdefault("spec", {})["project"] = (app.get("spec") or {}).get("project")
    return patched


def _name(manifest: Mapping[str, Any]) -> str:
    return str((manifest.get("metadata") or {}).get("name") or "")


_LEFT = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")


def _left_placeholder(name: str) -> str:
    """Why a name kept a `{{...}}`: fasttemplate (no `goTemplate`) leaves a key the
    parameters lack as written, as Argo CD does, so every element gets the same name.
    `{{.cluster}}` is Go template syntax: argo-helm's argocd-apps CI values write it in a set
    without `goTemplate: true`."""
    found = _LEFT.search(name)
    if found is None:
        return ""
    key = found.group(1)
    if key.startswith("."):
        return (
            f": its placeholder {found.group(0)} is Go template syntax, which only "
            "`goTemplate: true` reads (fasttemplate leaves it as written)"
        )
    return (
        f": its placeholder {found.group(0)} was left as written (the generator's parameters "
        f"have no key {key!r})"
    )


def _duplicate(apps: list[GeneratedApp]) -> GenerationError | None:
    seen: set[str] = set()
    for app in apps:
        if not app.name:
            return GenerationError(
                RENDER_ERROR,
                "a generated Application has no name",
                (*app.template_path, "metadata", "name"),
            )
        if app.name in seen:
            message = f"ApplicationSet generates more than one Application named {app.name!r}"
            message += _left_placeholder(app.name)
            return GenerationError(
                VALIDATION_ERROR, message, (*app.template_path, "metadata", "name")
            )
        seen.add(app.name)
    return None
