"""Identity of Kubernetes objects inside the sync planner."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "CLUSTER_SCOPED_KINDS",
    "ResourceKey",
    "annotation",
    "annotation_values",
    "is_namespaced",
    "key_of",
]

# Core cluster-scoped kinds; a caller with discovery passes the other cluster-scoped kinds
# (ClusterAnalysisTemplate, a CRD's cluster-scoped kind) as `cluster_scoped`.
CLUSTER_SCOPED_KINDS = frozenset(
    {
        ("", "Namespace"),
        ("", "Node"),
        ("", "PersistentVolume"),
        ("storage.k8s.io", "StorageClass"),
        ("storage.k8s.io", "CSIDriver"),
        ("apiextensions.k8s.io", "CustomResourceDefinition"),
        ("rbac.authorization.k8s.io", "ClusterRole"),
        ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
        ("apiregistration.k8s.io", "APIService"),
        ("scheduling.k8s.io", "PriorityClass"),
        ("networking.k8s.io", "IngressClass"),
        ("node.k8s.io", "RuntimeClass"),
        ("policy", "PodSecurityPolicy"),
        ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"),
        ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"),
    }
)


@dataclass(frozen=True, order=True)
class ResourceKey:
    group: str
    kind: str
    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.kind}/{self.name}"

    @property
    def qualified(self) -> str:
        group = f"{self.group}/" if self.group else ""
        namespace = f"{self.namespace}/" if self.namespace else ""
        return f"{group}{self.kind}/{namespace}{self.name}"


def is_namespaced(
    group: str, kind: str, *, cluster_scoped: Collection[tuple[str, str]] = ()
) -> bool:
    return (group, kind) not in CLUSTER_SCOPED_KINDS and (group, kind) not in cluster_scoped


def key_of(
    obj: Mapping[str, Any],
    *,
    default_namespace: str = "",
    cluster_scoped: Collection[tuple[str, str]] = (),
) -> ResourceKey:
    """The key of `obj`; namespaced kinds without a namespace take `default_namespace`.
    `cluster_scoped` names (group, kind) pairs beyond the built-in table that have no
    namespace, whatever the object says."""
    group = str(obj.get("apiVersion", "")).rpartition("/")[0]
    kind = str(obj.get("kind", ""))
    meta = obj.get("metadata") or {}
    namespace = ""
    if is_namespaced(group, kind, cluster_scoped=cluster_scoped):
        namespace = str(meta.get("namespace") or "") or default_namespace
    return ResourceKey(group, kind, namespace, str(meta.get("name") or ""))


def annotation(obj: Mapping[str, Any] | None, name: str) -> str | None:
    if obj is None:
        return None
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    value = annotations.get(name)
    return None if value is None else str(value)


def annotation_values(obj: Mapping[str, Any] | None, name: str) -> tuple[str, ...]:
    """Comma-separated annotation values, trimmed, empty items dropped, duplicates removed."""
    raw = annotation(obj, name) or ""
    seen: dict[str, None] = {}
    for item in raw.split(","):
        if item.strip():
            seen[item.strip()] = None
    return tuple(seen)
