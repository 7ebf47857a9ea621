"""Small builders for the manifests the sync tests plan over."""

from __future__ import annotations

from typing import Any

GROUP_VERSIONS = {
    "Namespace": "v1",
    "ConfigMap": "v1",
    "Secret": "v1",
    "Service": "v1",
    "ServiceAccount": "v1",
    "Pod": "v1",
    "PersistentVolumeClaim": "v1",
    "Deployment": "apps/v1",
    "StatefulSet": "apps/v1",
    "Job": "batch/v1",
    "HorizontalPodAutoscaler": "autoscaling/v2",
    "PodDisruptionBudget": "policy/v1",
    "Ingress": "networking.k8s.io/v1",
    "CustomResourceDefinition": "apiextensions.k8s.io/v1",
    "ClusterRole": "rbac.authorization.k8s.io/v1",
    "Role": "rbac.authorization.k8s.io/v1",
    "APIService": "apiregistration.k8s.io/v1",
    "Rollout": "argoproj.io/v1alpha1",
}


def obj(
    kind: str,
    name: str,
    *,
    namespace: str | None = "shop",
    wave: int | None = None,
    annotations: dict[str, str] | None = None,
    api_version: str | None = None,
    **fields: Any,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace and kind not in ("Namespace", "CustomResourceDefinition", "ClusterRole"):
        meta["namespace"] = namespace
    notes = dict(annotations or {})
    if wave is not None:
        notes["argocd.argoproj.io/sync-wave"] = str(wave)
    if notes:
        meta["annotations"] = notes
    version = api_version or GROUP_VERSIONS.get(kind, "example.com/v1")
    return {"apiVersion": version, "kind": kind, "metadata": meta, **fields}


def hook(kind: str, name: str, hook_types: str, **kw: Any) -> dict[str, Any]:
    notes = {"argocd.argoproj.io/hook": hook_types, **kw.pop("annotations", {})}
    return obj(kind, name, annotations=notes, **kw)


def crd(group: str, kind: str, **kw: Any) -> dict[str, Any]:
    plural = kind.lower() + "s"
    return obj(
        "CustomResourceDefinition",
        f"{plural}.{group}",
        spec={"group": group, "names": {"kind": kind, "plural": plural}},
        **kw,
    )
