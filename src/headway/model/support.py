"""What Argo lets a manifest ask for and Headway does not run yet: one table, two readers.

The runtime reads it to refuse (the Rollout reconcile's InvalidSpec, the analysis
providers); `headway validate` and `headway check` read it to say so before anything ships.
Both use the same functions and messages, so they cannot drift.

Each function takes the raw mapping as written (no typed view: the runtime calls them on
objects the schema already accepted, validate on anything) and returns `Gap`s whose path is
relative to that mapping. Purely computational.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from headway.model.application_sources import argo_field_names
from headway.model.diagnostics import Diagnostic
from headway.model.gateway_plugin_config import header_step_problems, plugin_config_problems
from headway.model.traffic_routing import ROUTER_FIELDS
from headway.model.yamlload import Document, PathPart, format_path

__all__ = [
    "HELM_RENDERED_FIELDS",
    "KUSTOMIZE_RENDERED_FIELDS",
    "NOT_YET",
    "SUPPORTED_PROVIDERS",
    "SUPPORTED_PROVIDER_PLUGINS",
    "SUPPORTED_ROUTERS",
    "SUPPORTED_ROUTER_PLUGINS",
    "UNSUPPORTED_AUTHENTICATION",
    "UNSUPPORTED_KINDS",
    "UNSUPPORTED_STEP_KINDS",
    "Gap",
    "application_gaps",
    "document_gaps",
    "metric_gaps",
    "refused_source_fields",
    "rollout_gaps",
]

NOT_YET = "not supported by Headway yet"

# Traffic routers Headway drives (the local mesh realizes each one's objects); plugins by name.
SUPPORTED_ROUTERS = ("istio", "nginx", "alb", "smi", "traefik", "ambassador", "apisix", "appMesh")
SUPPORTED_ROUTER_PLUGINS = ("argoproj-labs/gatewayAPI",)
# Routers whose header routes (setHeaderRoute) compare whole values only (`exact`).
_EXACT_HEADER_ROUTES = ("alb",)
_ROUTER_KEYS = (*ROUTER_FIELDS, "plugins")
# Canary step kinds Headway refuses rather than skip (a skipped step is a silent promotion).
UNSUPPORTED_STEP_KINDS = ("plugin",)
# Routers that mirror traffic (setMirrorRoute); Argo also lets any plugin take the step.
_MIRRORING_ROUTERS = ("istio",)
# Metric providers Headway measures with; plugins by their registered name.
SUPPORTED_PROVIDERS = ("prometheus", "web", "job")
SUPPORTED_PROVIDER_PLUGINS = ("headway.dev/traffic", "headway.dev/judge")
# Authentication blocks of prometheus/web metrics Headway does not send.
UNSUPPORTED_AUTHENTICATION = ("sigv4", "oauth2")
# argoproj.io kinds with no Headway controller: stored, they would never run.
UNSUPPORTED_KINDS: dict[str, str] = {}
# An Application source's `helm` / `kustomize` fields the renderers apply; any other field
# makes the render fail (source/render_helm.py, render_kustomize.py) rather than be dropped.
HELM_RENDERED_FIELDS = frozenset({
    "releaseName", "valueFiles", "values", "valuesObject", "parameters",
    "ignoreMissingValueFiles", "skipCrds", "skipTests", "namespace",
    "version",  # Helm 3 is the only version; accepted and ignored as Argo CD does
    "passCredentials",  # credentials to an archive on another host (headway.source.helm_repo)
})  # fmt: skip
KUSTOMIZE_RENDERED_FIELDS = frozenset({
    "namePrefix", "nameSuffix", "namespace", "images", "replicas", "commonLabels",
    "commonAnnotations", "commonAnnotationsEnvsubst", "forceCommonLabels",
    "forceCommonAnnotations", "patches", "components",
})  # fmt: skip
_RENDERED_FIELDS = {"helm": HELM_RENDERED_FIELDS, "kustomize": KUSTOMIZE_RENDERED_FIELDS}


def refused_source_fields(tool: str, block: Mapping[str, Any]) -> str | None:
    """Why a renderer refuses a source's `helm` / `kustomize` block, or None: the fields it
    does not apply, a name Argo CD does not know said as such (Argo CD would drop it)."""
    refused = sorted(set(block) - _RENDERED_FIELDS[tool])
    if not refused:
        return None
    known = argo_field_names(tool)
    unknown = [_unknown_field(tool, name, known) for name in refused if name not in known]
    unapplied = [name for name in refused if name in known]
    reasons = [*unknown, *([f"{', '.join(unapplied)} not supported by Headway"] * bool(unapplied))]
    return f"{tool}: {'; '.join(reasons)}"


def _unknown_field(tool: str, name: str, known: frozenset[str]) -> str:
    close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return f"{name} is not an Argo CD {tool} field{hint}, which Argo CD would drop unseen"


@dataclass(frozen=True)
class Gap:
    """One field Headway cannot honour, and what to do instead."""

    path: tuple[PathPart, ...]
    message: str

    def describe(self, prefix: Sequence[PathPart] = ()) -> str:
        """`spec.workloadRef: not supported by Headway yet; ...` (the path, then why)."""
        return f"{format_path((*prefix, *self.path))}: {self.message}"


def rollout_gaps(spec: Mapping[str, Any]) -> list[Gap]:
    """What in a Rollout's `spec` Headway refuses to run, in field order."""
    gaps: list[Gap] = []
    ref = spec.get("workloadRef")
    if ref is not None and (_mapping(ref).get("apiVersion"), _mapping(ref).get("kind")) != (
        "apps/v1",
        "Deployment",
    ):
        message = f"a workloadRef to anything but an apps/v1 Deployment is {NOT_YET}"
        gaps.append(Gap(("workloadRef",), f"{message}; set spec.template"))
    strategy = _mapping(spec.get("strategy"))
    canary = _mapping(strategy.get("canary"))
    prefix: tuple[PathPart, ...] = ("strategy", "canary")
    gaps.extend(Gap((*prefix, *g.path), g.message) for g in _canary_gaps(canary))
    return gaps


def _canary_gaps(canary: Mapping[str, Any]) -> list[Gap]:
    gaps: list[Gap] = []
    steps = canary.get("steps")
    routing = _mapping(canary.get("trafficRouting"))
    for index, step in enumerate(steps if isinstance(steps, list) else []):
        for kind in UNSUPPORTED_STEP_KINDS:
            if isinstance(step, Mapping) and step.get(kind) is not None:
                advice = "remove the step (it is refused, not skipped)"
                message = f"this step kind is {NOT_YET}; {advice}"
                gaps.append(Gap(("steps", index, kind), message))
    gaps.extend(_router_gaps(routing, steps if isinstance(steps, list) else []))
    if canary.get("pingPong") is not None:
        gaps.append(Gap(("pingPong",), f"{NOT_YET}; use stableService and canaryService"))
    return gaps


def _router_gaps(routing: Mapping[str, Any], steps: list[Any]) -> list[Gap]:
    """Routers Headway does not drive, several at once, and header matches a router cannot write."""
    gaps: list[Gap] = []
    message = _UNSUPPORTED_ROUTER
    configured = [r for r in _ROUTER_KEYS if routing.get(r) is not None]
    for router in configured:
        if router == "plugins":
            gaps.extend(
                Gap(("trafficRouting", "plugins", name), message)
                for name in _mapping(routing.get("plugins"))
                if name not in SUPPORTED_ROUTER_PLUGINS
            )
        elif router not in SUPPORTED_ROUTERS:
            gaps.append(Gap(("trafficRouting", router), message))
    gateway = _mapping(routing.get("plugins")).get(SUPPORTED_ROUTER_PLUGINS[0])
    gaps.extend(
        Gap(("trafficRouting", "plugins", SUPPORTED_ROUTER_PLUGINS[0], *where), message)
        for where, message in plugin_config_problems(_mapping(gateway), not_yet=NOT_YET)
    )
    if gateway:
        problems = header_step_problems(_mapping(gateway), steps)
        gaps.extend(Gap(where, message) for where, message in problems)
    if len(configured) > 1 or len(_mapping(routing.get("plugins"))) > 1:
        several = f"routing through several routers at once is {NOT_YET}; keep one"
        gaps.append(Gap(("trafficRouting",), several))
    gaps.extend(_mirror_gaps(configured, steps))
    exact_only = [r for r in configured if r in _EXACT_HEADER_ROUTES]
    for index, step in enumerate(steps):
        route = _mapping(_mapping(step).get("setHeaderRoute"))
        for at, match in enumerate(route.get("match") or [] if exact_only else []):
            if not isinstance(_mapping(_mapping(match).get("headerValue")).get("exact"), str):
                where = ("steps", index, "setHeaderRoute", "match", at, "headerValue")
                message = f"prefix and regex header values through {exact_only[0]} are {NOT_YET}"
                gaps.append(Gap(where, f"{message}; use exact"))
    return gaps


_SUPPORTED_ROUTER_NAMES = ", ".join(
    (*SUPPORTED_ROUTERS, *(f'plugins["{name}"]' for name in SUPPORTED_ROUTER_PLUGINS))
)
_UNSUPPORTED_ROUTER = (
    f"this traffic router is {NOT_YET} "
    f"(supported: {_SUPPORTED_ROUTER_NAMES}, realized by the local mesh)"
)


def _mirror_gaps(configured: list[str], steps: list[Any]) -> list[Gap]:
    """A setMirrorRoute step through a router plugin: Argo hands it to the plugin (the Gateway
    API plugin writes nothing for it), so the step would pass with nothing mirrored."""
    if "plugins" not in configured or any(r in _MIRRORING_ROUTERS for r in configured):
        return []  # the other routers are refused by the Rollout's validation, as in Argo
    message = (
        f"mirroring through a router plugin is {NOT_YET} (only istio mirrors); "
        "remove the step or route through istio"
    )
    return [
        Gap(("steps", index, "setMirrorRoute"), message)
        for index, step in enumerate(steps)
        if _mapping(step).get("setMirrorRoute") is not None
    ]


def metric_gaps(metric: Mapping[str, Any]) -> list[Gap]:
    """A metric whose provider or authentication Headway cannot use."""
    provider = _mapping(metric.get("provider"))
    gaps: list[Gap] = []
    for kind, block in provider.items():
        if block is None:
            continue
        if kind == "plugin":
            gaps.extend(_plugin_gaps(_mapping(block)))
        elif kind not in SUPPORTED_PROVIDERS:
            message = (
                f"this metric provider is {NOT_YET} (supported: {', '.join(_supported_names())})"
            )
            gaps.append(Gap(("provider", kind), message))
        else:
            gaps.extend(_auth_gaps(kind, _mapping(block)))
    return gaps


def _plugin_gaps(plugin: Mapping[str, Any]) -> list[Gap]:
    supported = ", ".join(_supported_names())
    return [
        Gap(("provider", "plugin", name), f"this plugin provider is {NOT_YET} ({supported})")
        for name in plugin
        if name not in SUPPORTED_PROVIDER_PLUGINS
    ]


def _auth_gaps(kind: str, block: Mapping[str, Any]) -> list[Gap]:
    authentication = _mapping(block.get("authentication"))
    gaps = [
        Gap(("provider", kind, "authentication", name), f"{NOT_YET}; use basicAuth or a header")
        for name in UNSUPPORTED_AUTHENTICATION
        if authentication.get(name)
    ]
    if block.get("insecure") is True:
        advice = "give the metrics endpoint a certificate the system trusts"
        message = f"skipping TLS verification is {NOT_YET}; {advice}"
        gaps.append(Gap(("provider", kind, "insecure"), message))
    return gaps


def _supported_names() -> tuple[str, ...]:
    return (*SUPPORTED_PROVIDERS, *(f"plugin {n}" for n in SUPPORTED_PROVIDER_PLUGINS))


def application_gaps(spec: Mapping[str, Any]) -> list[Gap]:
    """`helm` / `kustomize` fields of the Application's sources that Headway's renderers
    refuse, so `headway validate` names them at their line before a render fails on them."""
    sources = spec.get("sources")
    located: list[tuple[tuple[PathPart, ...], Any]] = [(("source",), spec.get("source"))]
    if isinstance(sources, list):  # `source` is then ignored, as in Argo CD
        located = [(("sources", index), source) for index, source in enumerate(sources)]
    gaps: list[Gap] = []
    for where, source in located:
        for tool, rendered in _RENDERED_FIELDS.items():
            block = _mapping(_mapping(source).get(tool))
            gaps += [
                Gap((*where, tool, name), f"{NOT_YET}: the render refuses the Application")
                for name in block
                if name not in rendered
            ]
    return gaps


def document_gaps(document: Document, kind: str) -> list[Diagnostic]:
    """Every gap of one `argoproj.io` object as an error diagnostic at its field."""
    obj = _mapping(document.obj)
    spec = _mapping(obj.get("spec"))
    if kind in UNSUPPORTED_KINDS:
        message = UNSUPPORTED_KINDS[kind].format(not_yet=NOT_YET)
        return [document.diagnostic(("kind",), message)]
    located: list[tuple[tuple[PathPart, ...], Gap]] = []
    if kind == "Rollout":
        located = [(("spec",), g) for g in rollout_gaps(spec)]
    elif kind == "Application":
        located = [(("spec",), g) for g in application_gaps(spec)]
    elif kind in ("AnalysisTemplate", "ClusterAnalysisTemplate", "AnalysisRun"):
        metrics = spec.get("metrics")
        for index, metric in enumerate(metrics if isinstance(metrics, list) else []):
            located.extend((("spec", "metrics", index), g) for g in metric_gaps(_mapping(metric)))
    return [document.diagnostic((*where, *g.path), g.message) for where, g in located]


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if type(value) is dict or isinstance(value, Mapping) else {}
