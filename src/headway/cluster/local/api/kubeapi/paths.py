"""Request paths and query parameters of the Kubernetes REST API. Purely computational.

`/api/v1/namespaces/NS/pods/NAME/status` and `/apis/apps/v1/deployments` both become a
`ResourcePath`; a `ListQuery` holds what a list or watch asks for.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from headway.cluster.local.api.kubeapi.status import ApiError
from headway.model.selectors import SelectorError, to_selector

__all__ = ["FieldSelector", "ListQuery", "ResourcePath", "parse_list_query", "parse_path"]

# Subresources of a Namespace (`/api/v1/namespaces/NAME/status`): any other third
# segment after `namespaces/NAME/` is a namespaced collection.
_NAMESPACE_SUBRESOURCES = frozenset({"status", "finalize"})


@dataclass(frozen=True)
class ResourcePath:
    group: str
    version: str
    plural: str = ""  # "" -> the group-version itself (its discovery document)
    namespace: str | None = None
    name: str = ""
    subresource: str = ""


def parse_path(path: str) -> ResourcePath | None:
    """The resource a path names, or None when it is not a resource path."""
    parts = [p for p in path.split("/") if p]
    if len(parts) >= 2 and parts[0] == "api":
        group, version, rest = "", parts[1], parts[2:]
    elif len(parts) >= 3 and parts[0] == "apis":
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        return None
    return _resource_part(group, version, rest)


def _resource_part(group: str, version: str, rest: list[str]) -> ResourcePath | None:
    namespace: str | None = None
    namespaced_collection = (
        len(rest) >= 3 and rest[0] == "namespaces"
        and not (len(rest) == 3 and group == "" and rest[2] in _NAMESPACE_SUBRESOURCES)
    )
    if namespaced_collection:
        namespace, rest = rest[1], rest[2:]
    if len(rest) > 3:
        return None
    plural, name, subresource = [*rest, "", "", ""][:3]
    return ResourcePath(group=group, version=version, plural=plural, namespace=namespace,
                        name=name, subresource=subresource)


@dataclass(frozen=True)
class FieldSelector:
    """A field selector: `path=value`, `path==value` and `path!=value` terms, all of which
    must hold. A path is dotted (`involvedObject.name`); values compare as text."""

    equal: tuple[tuple[str, str], ...] = ()
    not_equal: tuple[tuple[str, str], ...] = ()

    def matches(self, obj: Mapping[str, Any]) -> bool:
        return all(_field_text(obj, f) == v for f, v in self.equal) and all(
            _field_text(obj, f) != v for f, v in self.not_equal
        )


def _field_text(obj: Mapping[str, Any], path: str) -> str:
    node: Any = obj
    for key in ("source.component" if path == "source" else path).split("."):
        node = node.get(key) if isinstance(node, Mapping) else None
    if isinstance(node, bool):
        return "true" if node else "false"
    return "" if node is None else str(node)


# The fields Kubernetes lets each kind be selected by, besides metadata.name and
# metadata.namespace (what `kubectl describe` and `kubectl get --field-selector` use).
_SELECTABLE_BY_KIND: dict[str, frozenset[str]] = {
    "events": frozenset({
        "involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
        "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
        "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type",
    }),
    "pods": frozenset({
        "spec.nodeName", "spec.restartPolicy", "spec.schedulerName",
        "spec.serviceAccountName", "spec.hostNetwork", "status.phase", "status.podIP",
        "status.nominatedNodeName",
    }),
    "secrets": frozenset({"type"}),
    "namespaces": frozenset({"status.phase"}),
    "replicasets": frozenset({"status.replicas"}),
    "jobs": frozenset({"status.successful"}),
}
_SELECTABLE = frozenset({"metadata.name", "metadata.namespace"})


def parse_field_selector(text: str, plural: str) -> FieldSelector:
    """The selector `text` names, for the kind with this plural (400 on a field the kind
    cannot be selected by, as Kubernetes answers)."""
    allowed = _SELECTABLE | _SELECTABLE_BY_KIND.get(plural, frozenset())
    equal: list[tuple[str, str]] = []
    not_equal: list[tuple[str, str]] = []
    for term in filter(None, (t.strip() for t in text.split(","))):
        if "!=" in term:
            field, _, value = term.partition("!=")
            target = not_equal
        elif "=" in term:
            field, _, value = term.replace("==", "=", 1).partition("=")
            target = equal
        else:
            raise ApiError(400, "BadRequest", f"invalid field selector term {term!r}")
        if field.strip() not in allowed:
            raise ApiError(400, "BadRequest", f'field label not supported: {field.strip()} '
                           f"({plural} are selected by {', '.join(sorted(allowed))})")
        target.append((field.strip(), value.strip()))
    return FieldSelector(equal=tuple(equal), not_equal=tuple(not_equal))


@dataclass(frozen=True)
class ListQuery:
    label_selector: str = ""
    field_selector: FieldSelector = FieldSelector()
    limit: int = 0
    continue_token: str = ""
    watch: bool = False
    resource_version: str = ""
    timeout_seconds: float | None = None
    bookmarks: bool = False
    send_initial_events: bool = False


def parse_list_query(query: Mapping[str, str], plural: str) -> ListQuery:
    version = query.get("resourceVersion", "")
    if version and not version.isdigit():
        raise ApiError(400, "BadRequest", f"resourceVersion: {version!r} is not a version "
                                          "this server issued")
    try:
        to_selector(query.get("labelSelector") or None)
    except SelectorError as error:
        raise ApiError(400, "BadRequest", f"labelSelector: {error}") from None
    return ListQuery(
        label_selector=query.get("labelSelector", ""),
        field_selector=parse_field_selector(query.get("fieldSelector", ""), plural),
        limit=_number(query, "limit"),
        continue_token=query.get("continue", ""),
        watch=_flag(query, "watch"),
        resource_version=query.get("resourceVersion", ""),
        timeout_seconds=float(_number(query, "timeoutSeconds")) if "timeoutSeconds" in query
        else None,
        bookmarks=_flag(query, "allowWatchBookmarks"),
        send_initial_events=_flag(query, "sendInitialEvents"),
    )


def _flag(query: Mapping[str, str], name: str) -> bool:
    return query.get(name, "").lower() in ("1", "true")


def _number(query: Mapping[str, str], name: str) -> int:
    raw = query.get(name, "0") or "0"
    try:
        value = int(raw)
    except ValueError:
        raise ApiError(400, "BadRequest", f"{name}: {raw!r} is not an integer") from None
    if value < 0:
        raise ApiError(400, "BadRequest", f"{name}: must not be negative ({value})")
    return value
