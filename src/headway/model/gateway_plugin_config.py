"""The Gateway API router plugin's configuration (`trafficRouting.plugins["argoproj-labs/
gatewayAPI"]`) against what Headway reads of it.

The plugin (argoproj-labs/rollouts-plugin-trafficrouter-gatewayapi, `pkg/plugin/types.go`
`GatewayAPITrafficRouting` at 0.15.0) decodes its block with `json.Unmarshal`, so a field it
does not know is dropped without a word, and a misspelt `httpRoutes` routes nothing. Headway
reads `httpRoute`, `httpRoutes[].name`, `namespace` and `configMap` (the ConfigMap of header
rules, as plugin releases before 0.13.0 kept it); every other field of the plugin's struct is
refused by name until Headway does what it asks, and any other field is named as unknown.
Purely computational: (path, message) pairs, the caller makes them diagnostics.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["header_step_problems", "plugin_config_problems"]

PathPart = str | int
Problem = tuple[tuple[PathPart, ...], str]

_READ = frozenset({"httpRoute", "httpRoutes", "namespace", "configMap"})
_OTHER_ROUTE_KINDS = {
    "grpcRoute": "GRPCRoute", "grpcRoutes": "GRPCRoute",
    "tcpRoute": "TCPRoute", "tcpRoutes": "TCPRoute",
    "tlsRoute": "TLSRoute", "tlsRoutes": "TLSRoute",
}  # fmt: skip
_SELECTORS = ("httpRouteSelector", "grpcRouteSelector", "tcpRouteSelector", "tlsRouteSelector")
_LABEL_FIELDS = ("disableInProgressLabel", "inProgressLabelKey", "inProgressLabelValue")
_KNOWN = _READ | set(_OTHER_ROUTE_KINDS) | set(_SELECTORS) | set(_LABEL_FIELDS)
_ROUTE_ENTRY_FIELDS = frozenset({"name", "useHeaderRoutes"})


def plugin_config_problems(block: Mapping[str, Any], *, not_yet: str) -> list[Problem]:
    """What in the plugin's block Headway would not do as written, in field order."""
    problems: list[Problem] = []
    for key, value in block.items():
        name = str(key)
        if name in _OTHER_ROUTE_KINDS:
            kind = _OTHER_ROUTE_KINDS[name]
            problems.append(((name,), f"routing through a {kind} is {not_yet} (Headway sets "
                             "HTTPRoute weights only); route through httpRoute or httpRoutes"))
        elif name in _SELECTORS:
            problems.append(((name,), f"finding routes by label selector is {not_yet}; name "
                             "them in httpRoute or httpRoutes"))
        elif name in _LABEL_FIELDS and value not in (None, False, ""):
            problems.append(((name,), f"changing the in-progress label is {not_yet} (Headway "
                             "always sets rollouts.argoproj.io/gatewayapi-canary: in-progress "
                             "while the canary weight is above 0); remove the field"))
        elif name not in _KNOWN:
            problems.append(((name,), _unknown(sorted(_KNOWN))))
        elif name == "httpRoutes":
            problems.extend(_route_entry_problems(value))
    return problems


def _route_entry_problems(entries: Any) -> list[Problem]:
    problems: list[Problem] = []
    for index, entry in enumerate(entries if isinstance(entries, list) else []):
        if not isinstance(entry, Mapping):
            continue
        problems.extend(
            (("httpRoutes", index, str(key)), _unknown(sorted(_ROUTE_ENTRY_FIELDS)))
            for key in entry
            if key not in _ROUTE_ENTRY_FIELDS
        )
    return problems


def _unknown(known: list[str]) -> str:
    return (
        "unknown field (the gatewayAPI plugin would drop it without a word); the known ones: "
        f"{', '.join(known)}"
    )


def header_step_problems(block: Mapping[str, Any], steps: list[Any]) -> list[Problem]:
    """A `setHeaderRoute` step when no route takes header rules: the plugin writes them only
    to `httpRoute` and to `httpRoutes` entries with `useHeaderRoutes: true`, so the step would
    pass with no request routed by header. Paths are relative to the canary strategy."""
    entries = block.get("httpRoutes")
    flagged = [
        e for e in (entries if isinstance(entries, list) else [])
        if isinstance(e, Mapping) and e.get("useHeaderRoutes") is True
    ]
    if block.get("httpRoute") or flagged:
        return []
    message = (
        "no route of the gatewayAPI plugin takes header rules (set `useHeaderRoutes: true` on "
        "an httpRoutes entry, or use httpRoute), so the step would route nothing by header"
    )
    return [
        (("steps", index, "setHeaderRoute"), message)
        for index, step in enumerate(steps)
        if isinstance(step, Mapping) and isinstance(step.get("setHeaderRoute"), Mapping)
        and step["setHeaderRoute"].get("match")
    ]
