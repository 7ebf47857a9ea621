"""The clusterDecisionResource generator, pure: a ConfigMap names a duck-typed kind
(`apiVersion`, `kind`, `statusListKey` (default `clusters`), `matchKey`); the resources of that
kind chosen by `name` or `labelSelector` list decisions in `status.<statusListKey>`; each
decision whose `matchKey` value names a registered cluster becomes a parameter set of that
cluster's `name` and `server` plus the decision's own fields (Argo CD's duck_type.go).

Stricter than Argo CD, which answers "no parameters" for these: a ConfigMap without
`matchKey`, a status list that is not a list of mappings. Both are errors here, since an
empty answer would remove every Application the set generates.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from headway.appset.inputs import IN_CLUSTER_NAME, IN_CLUSTER_SERVER, ClusterSecret
from headway.model.selectors import SelectorError, selector_from_object

__all__ = ["DecisionError", "decision_params"]


class DecisionError(ValueError):
    """A generator, ConfigMap or resource that cannot give decisions; `field` is under the
    generator (empty when the fault is in the ConfigMap or the resources)."""

    def __init__(self, field: tuple[str | int, ...], message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def duck_kind(config: Mapping[str, str], name: str) -> tuple[str, str]:
    """(apiVersion, kind) the ConfigMap names; a group is required, as in Argo CD."""
    api_version, kind = config.get("apiVersion", ""), config.get("kind", "")
    if not kind or "/" not in api_version or api_version.startswith("/"):
        raise DecisionError(
            (), f"ConfigMap {name}: needs data.apiVersion (group/version) and data.kind"
        )
    if not config.get("matchKey"):
        raise DecisionError((), f"ConfigMap {name}: data.matchKey is missing")
    return api_version, kind


def chosen(
    spec: Mapping[str, Any], resources: Sequence[Mapping[str, Any]]
) -> list[Mapping[str, Any]]:
    """The resources the generator's `name` or `labelSelector` (exactly one) picks."""
    name = str(spec.get("name") or "")
    raw = spec.get("labelSelector") or {}
    if bool(name) == bool(raw.get("matchLabels") or raw.get("matchExpressions")):
        raise DecisionError((), "set exactly one of name and labelSelector")
    if name:
        return [r for r in resources if (r.get("metadata") or {}).get("name") == name]
    try:
        selector = selector_from_object(raw, path="labelSelector")
    except SelectorError as err:
        raise DecisionError(("labelSelector",), str(err)) from None
    return [r for r in resources if selector.matches((r.get("metadata") or {}).get("labels") or {})]


def decision_params(
    *,
    config: Mapping[str, str],
    resources: Sequence[Mapping[str, Any]],
    clusters: Sequence[ClusterSecret],
    go_template: bool,
) -> list[dict[str, Any]]:
    """One parameter set per decision that names a registered cluster, in status order."""
    list_key = config.get("statusListKey") or "clusters"
    match_key = config["matchKey"]
    servers = {c.name: c.server for c in clusters}
    if not any(c.server.rstrip("/") == IN_CLUSTER_SERVER for c in clusters):
        servers.setdefault(IN_CLUSTER_NAME, IN_CLUSTER_SERVER)
    out: list[dict[str, Any]] = []
    for resource in resources:
        for decision in _decisions(resource, list_key):
            value = decision.get(match_key)
            if not isinstance(value, str) or value not in servers:
                continue  # an unknown cluster is skipped, as in Argo CD
            fields = (
                dict(decision) if go_template else {str(k): str(v) for k, v in decision.items()}
            )
            out.append({"name": value, "server": servers[value], **fields})
    return out


def _decisions(resource: Mapping[str, Any], list_key: str) -> list[Mapping[str, Any]]:
    status = resource.get("status")
    if not isinstance(status, Mapping) or not status:
        return []  # not decided yet
    found = status.get(list_key)
    name = (resource.get("metadata") or {}).get("name")
    if not isinstance(found, list) or not all(isinstance(d, Mapping) for d in found):
        raise DecisionError(
            (), f"{resource.get('kind')} {name}: status.{list_key} is not a list of mappings"
        )
    return found
