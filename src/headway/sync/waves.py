"""Sync waves and the kind order within a wave."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from headway.sync.resources import annotation

__all__ = ["HELM_HOOK_WEIGHT", "KIND_ORDER", "SYNC_WAVE_ANNOTATION", "kind_rank", "wave_of"]

SYNC_WAVE_ANNOTATION = "argocd.argoproj.io/sync-wave"
HELM_HOOK_WEIGHT = "helm.sh/hook-weight"

# gitops-engine's table (itself Helm's install order). Kinds not listed - custom resources
# among them - sort after every listed kind.
_KINDS = (
    "Namespace",
    "NetworkPolicy",
    "ResourceQuota",
    "LimitRange",
    "PodSecurityPolicy",
    "PodDisruptionBudget",
    "ServiceAccount",
    "Secret",
    "SecretList",
    "ConfigMap",
    "StorageClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "CustomResourceDefinition",
    "ClusterRole",
    "ClusterRoleList",
    "ClusterRoleBinding",
    "ClusterRoleBindingList",
    "Role",
    "RoleList",
    "RoleBinding",
    "RoleBindingList",
    "Service",
    "DaemonSet",
    "Pod",
    "ReplicationController",
    "ReplicaSet",
    "Deployment",
    "HorizontalPodAutoscaler",
    "StatefulSet",
    "Job",
    "CronJob",
    "IngressClass",
    "Ingress",
    "APIService",
)
KIND_ORDER: Mapping[str, int] = MappingProxyType({kind: i for i, kind in enumerate(_KINDS)})


def kind_rank(kind: str) -> int:
    return KIND_ORDER.get(kind, len(_KINDS))


def _int_or_none(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        return int(text.strip())
    except ValueError:
        return None


def wave_of(obj: Mapping[str, Any]) -> int:
    """`argocd.argoproj.io/sync-wave`, else `helm.sh/hook-weight`, else 0; a value that is
    not an integer counts as absent (Argo CD's rule)."""
    wave = _int_or_none(annotation(obj, SYNC_WAVE_ANNOTATION))
    if wave is not None:
        return wave
    weight = _int_or_none(annotation(obj, HELM_HOOK_WEIGHT))
    return weight if weight is not None else 0
