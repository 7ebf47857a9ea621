"""Generators: from a generator spec and the `Inputs`, the parameter sets. Pure.

list, clusters, git (directories and files), pullRequest and scmProvider (GitHub), plugin,
clusterDecisionResource, matrix and merge, each with `selector`, as Argo CD's
applicationset/generators compute them (docs/applicationset.md). A provider Headway does not
implement is a `GeneratorError`, so generation stops instead of producing fewer Applications.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import yaml

from headway.appset import cluster_decisions as decisions
from headway.appset import git_params
from headway.appset import pull_requests as prs
from headway.appset import scm_providers as scm
from headway.appset.inputs import (
    IN_CLUSTER_NAME,
    IN_CLUSTER_SERVER,
    ClusterSecret,
    ForgeRefused,
    Inputs,
    PluginQuery,
)
from headway.appset.paths import sanitize_name
from headway.appset.render import RenderFailure, TemplateMode, render_text, render_value
from headway.model.selectors import SelectorError, selector_from_object
from headway.model.yamlload import load_one
from headway.notify.gotemplate import TemplateError

__all__ = ["GENERATOR_KINDS", "GeneratorError", "Params", "generate_params"]

Params = dict[str, Any]
GENERATOR_KINDS = (
    "list",
    "clusters",
    "git",
    "pullRequest",
    "scmProvider",
    "plugin",
    "clusterDecisionResource",
    "matrix",
    "merge",
)
CLUSTER_SECRET_LABEL = "argocd.argoproj.io/secret-type"


class GeneratorError(ValueError):
    """A generator that cannot produce its parameters; `path` is its field in the set."""

    def __init__(self, path: Sequence[str | int], message: str) -> None:
        super().__init__(message)
        self.path = tuple(path)
        self.message = message


@dataclass(frozen=True)
class Context:
    mode: TemplateMode
    inputs: Inputs
    appset_name: str = ""


def kind_of(generator: Mapping[str, Any], path: tuple[str | int, ...]) -> str:
    """The one generator kind a spec names; `GeneratorError` for none, several or unknown."""
    for field in ("template", "values"):
        if field in generator:
            raise GeneratorError(
                (*path, field),
                f"a generator's own {field} goes inside its kind (e.g. clusters.{field}), where "
                f"Argo CD reads it; the ApplicationSet schema has no {field} beside the kind",
            )
    kinds = [k for k in generator if k != "selector"]
    if len(kinds) != 1:
        found = ", ".join(kinds) or "none"
        raise GeneratorError(path, f"a generator names exactly one kind, found: {found}")
    kind = kinds[0]
    if kind not in GENERATOR_KINDS:
        raise GeneratorError(
            path, f"unknown generator {kind!r}; known: {', '.join(GENERATOR_KINDS)}"
        )
    return kind


def generate_params(
    generator: Mapping[str, Any], *, context: Context, path: tuple[str | int, ...]
) -> list[Params]:
    """The parameter sets of one generator, filtered by its `selector`."""
    kind = kind_of(generator, path)
    spec = generator[kind]
    if not isinstance(spec, Mapping):
        raise GeneratorError((*path, kind), f"{kind} must be a mapping")
    params = _BY_KIND[kind](spec, context, (*path, kind))
    selector = generator.get("selector")
    if not selector:
        return params
    return _select(params, selector, (*path, "selector"))


def _select(params: list[Params], selector: Any, path: tuple[str | int, ...]) -> list[Params]:
    if not isinstance(selector, Mapping):
        raise GeneratorError(path, "selector must be a label selector mapping")
    try:
        compiled = selector_from_object(selector, path="selector")
    except SelectorError as err:
        raise GeneratorError(path, str(err)) from None
    return [p for p in params if compiled.matches(flatten(p))]


def flatten(params: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    """Nested parameters as `a.b.c` string keys (how selectors and fasttemplate see them)."""
    out: dict[str, str] = {}
    for key, value in params.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(flatten(value, f"{name}."))
        elif isinstance(value, list):
            out.update(flatten({str(i): v for i, v in enumerate(value)}, f"{name}."))
        else:
            out[name] = _go_text(value)
    return out


def _go_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "<nil>"
    return str(value)


# ---- list ---------------------------------------------------------------------------------


def _list(spec: Mapping[str, Any], ctx: Context, path: tuple[str | int, ...]) -> list[Params]:
    elements = spec.get("elements") or []
    if not isinstance(elements, list):
        raise GeneratorError((*path, "elements"), "elements must be a list")
    out = [_element(e, ctx, (*path, "elements", i)) for i, e in enumerate(elements)]
    text = spec.get("elementsYaml")
    if text:
        out.extend(_elements_yaml(text, (*path, "elementsYaml")))
    return out


def _element(element: Any, ctx: Context, path: tuple[str | int, ...]) -> Params:
    if not isinstance(element, Mapping):
        raise GeneratorError(path, "a list element must be a mapping")
    if ctx.mode.go_template:
        return dict(element)
    params: Params = {}
    for key, value in element.items():
        if key == "values" and isinstance(value, Mapping):
            params.update(
                {f"values.{k}": _string(v, (*path, "values", k)) for k, v in value.items()}
            )
        else:
            params[str(key)] = _string(value, (*path, key))
    return params


def _string(value: Any, path: tuple[str | int, ...]) -> str:
    if not isinstance(value, str):
        message = "without goTemplate, list element values must be strings (quote it)"
        raise GeneratorError(path, message)
    return value


def _elements_yaml(text: Any, path: tuple[str | int, ...]) -> list[Params]:
    try:
        loaded = load_one(str(text))
    except yaml.YAMLError as err:
        raise GeneratorError(path, f"elementsYaml is not YAML: {err}") from None
    if not isinstance(loaded, list) or not all(isinstance(e, dict) for e in loaded):
        raise GeneratorError(path, "elementsYaml must be a YAML list of mappings")
    return [dict(e) for e in loaded]


# ---- clusters -----------------------------------------------------------------------------


def _clusters(spec: Mapping[str, Any], ctx: Context, path: tuple[str | int, ...]) -> list[Params]:
    raw_selector = spec.get("selector") or {}
    try:
        selector = selector_from_object(raw_selector, path="clusters.selector")
    except SelectorError as err:
        raise GeneratorError((*path, "selector"), str(err)) from None
    secrets = list(ctx.inputs.clusters())
    chosen = [c for c in secrets if selector.matches({**c.labels, CLUSTER_SECRET_LABEL: "cluster"})]
    params = [_cluster_params(c, ctx.mode) for c in chosen]
    has_local = any(c.server.rstrip("/") == IN_CLUSTER_SERVER for c in secrets)
    if selector.is_everything and not has_local:
        params.append(
            {
                "name": IN_CLUSTER_NAME,
                "nameNormalized": IN_CLUSTER_NAME,
                "server": IN_CLUSTER_SERVER,
                "project": "",
            }
        )
    values = spec.get("values") or {}
    params = [with_values(p, values, ctx.mode, (*path, "values")) for p in params]
    return [{"clusters": params}] if spec.get("flatList") else params


def _cluster_params(secret: ClusterSecret, mode: TemplateMode) -> Params:
    params: Params = {
        "name": secret.name,
        "nameNormalized": sanitize_name(secret.name),
        "server": secret.server,
        "project": secret.project,
    }
    if mode.go_template:
        meta: Params = {}
        if secret.annotations:
            meta["annotations"] = dict(secret.annotations)
        if secret.labels:
            meta["labels"] = dict(secret.labels)
        params["metadata"] = meta
        return params
    params.update({f"metadata.annotations.{k}": v for k, v in secret.annotations.items()})
    params.update({f"metadata.labels.{k}": v for k, v in secret.labels.items()})
    return params


def with_values(
    params: Params, values: Mapping[str, Any], mode: TemplateMode, path: tuple[str | int, ...]
) -> Params:
    """`params` plus the generator's `values`, each rendered with `params` (`values.<key>`)."""
    if not values:
        return params
    rendered: dict[str, str] = {}
    for key, text in values.items():
        try:
            rendered[str(key)] = render_text(str(text), params, mode)
        except TemplateError as err:
            raise GeneratorError((*path, key), str(err)) from None
    if mode.go_template:
        return {**params, "values": rendered}
    return {**params, **{f"values.{k}": v for k, v in rendered.items()}}


# ---- git ----------------------------------------------------------------------------------


def _git(spec: Mapping[str, Any], ctx: Context, path: tuple[str | int, ...]) -> list[Params]:
    repo = str(spec.get("repoURL") or "")
    if not repo:
        raise GeneratorError((*path, "repoURL"), "repoURL is required")
    revision = str(spec.get("revision") or "HEAD")
    prefix = str(spec.get("pathParamPrefix") or "")
    for key in ("directories", "files"):
        items = spec.get(key)
        if items is not None and not (
            isinstance(items, list) and all(isinstance(i, Mapping) and i.get("path") for i in items)
        ):
            raise GeneratorError((*path, key), f"{key} must be a list of {{path: ...}} entries")
    if spec.get("directories"):
        params = git_params.directory_params(
            ctx.inputs,
            repo=repo,
            revision=revision,
            items=spec["directories"],
            go_template=ctx.mode.go_template,
            prefix=prefix,
        )
    elif spec.get("files"):
        params = git_params.file_params(
            ctx.inputs,
            repo=repo,
            revision=revision,
            items=spec["files"],
            go_template=ctx.mode.go_template,
            prefix=prefix,
        )
    else:
        raise GeneratorError(path, "a git generator needs directories or files")
    values = spec.get("values") or {}
    return [with_values(p, values, ctx.mode, (*path, "values")) for p in params]


# ---- scmProvider --------------------------------------------------------------------------


def _scm_provider(
    spec: Mapping[str, Any], ctx: Context, path: tuple[str | int, ...]
) -> list[Params]:
    try:
        query = scm.query_of(spec)
        filters = scm.filters_of(spec)
    except prs.SpecError as err:
        raise _spec_error("scmProvider", err, path) from None
    values = spec.get("values") or {}
    with _refusals_named(path, "scmProvider generator"):
        chosen = scm.chosen_branches(ctx.inputs, query, filters)
    at = (*path, "values")
    return [with_values(scm.params_of(repo), values, ctx.mode, at) for repo in chosen]


def _spec_error(kind: str, err: prs.SpecError, path: tuple[str | int, ...]) -> GeneratorError:
    """A malformed forge generator field, named in the message (`pullRequest: gitlab.project:
    project is required`)."""
    return GeneratorError((*path, *err.field), f"{kind}: {field_text(err.field)}: {err.message}")


@contextmanager
def _refusals_named(path: tuple[str | int, ...], generator: str) -> Iterator[None]:
    """A forge call the operator's policy refused, as a `GeneratorError` at the field to
    blame, whose message names it (`spec.generators[0].pullRequest.github.api`)."""
    try:
        yield
    except ForgeRefused as err:
        where = (*path, *err.field)
        raise GeneratorError(where, f"{generator} {field_text(where)}: {err.message}") from None


def field_text(path: Sequence[str | int]) -> str:
    """`("spec", "generators", 0, "list")` as `spec.generators[0].list`."""
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")


# ---- pullRequest --------------------------------------------------------------------------


def _pull_request(
    spec: Mapping[str, Any], ctx: Context, path: tuple[str | int, ...]
) -> list[Params]:
    try:
        query = prs.query_of(spec)
        filters = prs.filters_of(spec)
        labels = prs.label_rule_of(spec)
    except prs.SpecError as err:
        raise _spec_error("pullRequest", err, path) from None
    with _refusals_named(path, "pullRequest generator"):
        listed = ctx.inputs.pull_requests(query)
    pulls = prs.matching(listed, labels=labels, filters=filters)
    values = spec.get("values") or {}
    return [
        with_values(
            prs.params_of(p, go_template=ctx.mode.go_template), values, ctx.mode, (*path, "values")
        )
        for p in pulls
    ]


# ---- plugin -------------------------------------------------------------------------------


def _plugin(spec: Mapping[str, Any], ctx: Context, path: tuple[str | int, ...]) -> list[Params]:
    ref = spec.get("configMapRef")
    if not isinstance(ref, Mapping) or not ref.get("name"):
        message = "plugin: configMapRef.name is required"
        raise GeneratorError((*path, "configMapRef", "name"), message)
    inputs = spec.get("input") or {}
    given = inputs.get("parameters") if isinstance(inputs, Mapping) else None
    if not isinstance(given or {}, Mapping):
        raise GeneratorError((*path, "input", "parameters"), "plugin: parameters must be a mapping")
    parameters = dict(given or {})
    query = PluginQuery(
        config_map=str(ref["name"]),
        appset_name=ctx.appset_name,
        input_json=json.dumps(parameters, sort_keys=True),
    )
    values = spec.get("values") or {}
    out: list[Params] = []
    for found in ctx.inputs.plugin_parameters(query):
        params: Params = dict(found) if ctx.mode.go_template else flatten(found)
        echo = {"input": {"parameters": parameters}}
        if ctx.mode.go_template:
            params["generator"] = echo
        else:
            params.update(flatten(echo, "generator."))
        out.append(with_values(params, values, ctx.mode, (*path, "values")))
    return out


# ---- clusterDecisionResource --------------------------------------------------------------


def _cluster_decisions(
    spec: Mapping[str, Any], ctx: Context, path: tuple[str | int, ...]
) -> list[Params]:
    name = str(spec.get("configMapRef") or "")
    if not name:
        message = "clusterDecisionResource: configMapRef is required"
        raise GeneratorError((*path, "configMapRef"), message)
    try:
        config = ctx.inputs.config_map(name)
        api_version, kind = decisions.duck_kind(config, name)
        found = decisions.chosen(spec, ctx.inputs.resources(api_version, kind))
        if not found:
            raise decisions.DecisionError((), f"no {kind} ({api_version}) resource is chosen")
        params = decisions.decision_params(
            config=config,
            resources=found,
            clusters=ctx.inputs.clusters(),
            go_template=ctx.mode.go_template,
        )
    except decisions.DecisionError as err:
        message = f"clusterDecisionResource: {err.message}"
        raise GeneratorError((*path, *err.field), message) from None
    values = spec.get("values") or {}
    return [with_values(p, values, ctx.mode, (*path, "values")) for p in params]


# ---- matrix and merge ---------------------------------------------------------------------


def _children(spec: Mapping[str, Any], path: tuple[str | int, ...], least: int) -> list[Any]:
    children = spec.get("generators") or []
    if not isinstance(children, list) or len(children) < least:
        raise GeneratorError((*path, "generators"), f"needs at least {least} generators")
    return children


def _matrix(spec: Mapping[str, Any], ctx: Context, path: tuple[str | int, ...]) -> list[Params]:
    children = _children(spec, path, 2)
    if len(children) > 2:
        raise GeneratorError((*path, "generators"), "a matrix combines exactly 2 generators")
    out: list[Params] = []
    first_path = (*path, "generators", 0)
    for left in generate_params(children[0], context=ctx, path=first_path):
        second = _interpolated(children[1], left, ctx.mode, (*path, "generators", 1))
        for right in generate_params(second, context=ctx, path=(*path, "generators", 1)):
            out.append(_combine(left, right, ctx.mode, path))
    return out


def _interpolated(
    generator: Any, params: Params, mode: TemplateMode, path: tuple[str | int, ...]
) -> Any:
    """The second matrix generator with the first one's parameters rendered into it."""
    try:
        return render_value(generator, params, mode, path)
    except RenderFailure as err:
        raise GeneratorError(
            err.path, f"interpolating the first generator's parameters: {err}"
        ) from None


def _combine(
    left: Params, right: Params, mode: TemplateMode, path: tuple[str | int, ...]
) -> Params:
    if mode.go_template:
        return _deep_override(right, left)
    merged: Params = dict(left)
    for key, value in right.items():
        if key in merged and merged[key] != value:
            message = (
                f"found duplicate key {key} with different value, a: {merged[key]} ,b: {value}"
            )
            raise GeneratorError(path, message)
        merged[key] = value
    return merged


def _deep_override(base: Params, over: Params) -> Params:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = _deep_override(out[key], dict(value))
        else:
            out[key] = value
    return out


def _merge(spec: Mapping[str, Any], ctx: Context, path: tuple[str | int, ...]) -> list[Params]:
    children = _children(spec, path, 2)
    keys = [str(k) for k in spec.get("mergeKeys") or []]
    if not keys:
        raise GeneratorError((*path, "mergeKeys"), "a merge generator needs mergeKeys")
    sets = [
        generate_params(g, context=ctx, path=(*path, "generators", i))
        for i, g in enumerate(children)
    ]
    base = _by_merge_key(sets[0], keys, path)
    for others in sets[1:]:
        for key, override in _by_merge_key(others, keys, path).items():
            if key in base:
                merged = (
                    _deep_override(base[key], override)
                    if ctx.mode.go_template
                    else {**base[key], **override}
                )
                base[key] = merged
    return list(base.values())


def _by_merge_key(
    params: list[Params], keys: list[str], path: tuple[str | int, ...]
) -> dict[str, Params]:
    out: dict[str, Params] = {}
    for item in params:
        key = json.dumps({k: item.get(k) for k in sorted(set(keys))}, sort_keys=True, default=str)
        if key in out:
            raise GeneratorError(path, f"the merge keys select more than one parameter set: {key}")
        out[key] = item
    return out


_BY_KIND = {
    "list": _list,
    "clusters": _clusters,
    "git": _git,
    "pullRequest": _pull_request,
    "scmProvider": _scm_provider,
    "plugin": _plugin,
    "clusterDecisionResource": _cluster_decisions,
    "matrix": _matrix,
    "merge": _merge,
}
