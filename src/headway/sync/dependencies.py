"""Which workloads a resource's health depends on (HPA and KEDA scale targets, PDB
selectors) - used to explain a blocked wave instead of just reporting it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from headway.sync.resources import ResourceKey, key_of

__all__ = ["depends_on", "selector_matches"]

_WORKLOADS = frozenset({"Deployment", "StatefulSet", "ReplicaSet", "DaemonSet", "Rollout"})


def depends_on(
    obj: Mapping[str, Any], candidates: Iterable[Mapping[str, Any]]
) -> list[ResourceKey]:
    """Keys among `candidates` that `obj`'s health needs to exist."""
    key = key_of(obj)
    spec = obj.get("spec") or {}
    if key.kind in ("HorizontalPodAutoscaler", "ScaledObject"):
        ref = spec.get("scaleTargetRef") or {}
        group = str(ref.get("apiVersion", "apps/v1")).rpartition("/")[0]
        kind = str(ref.get("kind", "Deployment"))
        return [ResourceKey(group, kind, key.namespace, str(ref.get("name", "")))]
    if key.kind == "PodDisruptionBudget":
        selector = spec.get("selector") or {}
        return [
            key_of(c, default_namespace=key.namespace)
            for c in candidates
            if _is_workload_in(c, key.namespace) and selector_matches(selector, _pod_labels(c))
        ]
    return []


def _is_workload_in(obj: Mapping[str, Any], namespace: str) -> bool:
    return obj.get("kind") in _WORKLOADS and key_of(obj, default_namespace=namespace).namespace == (
        namespace
    )


def _pod_labels(obj: Mapping[str, Any]) -> Mapping[str, str]:
    template = (obj.get("spec") or {}).get("template") or {}
    return (template.get("metadata") or {}).get("labels") or {}


def selector_matches(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """A Kubernetes label selector (matchLabels and matchExpressions) against `labels`;
    an empty selector matches nothing here, since a PDB selecting everything names no
    particular workload."""
    match_labels = selector.get("matchLabels") or {}
    expressions = selector.get("matchExpressions") or []
    if not match_labels and not expressions:
        return False
    if any(labels.get(k) != v for k, v in match_labels.items()):
        return False
    return all(_expression_holds(e, labels) for e in expressions)


def _expression_holds(expression: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    key, operator = expression.get("key", ""), expression.get("operator", "")
    values = expression.get("values") or []
    if operator == "In":
        return labels.get(key) in values
    if operator == "NotIn":
        return labels.get(key) not in values
    if operator == "Exists":
        return key in labels
    if operator == "DoesNotExist":
        return key not in labels
    return False
