"""Small builders of manifests for the contract tests."""

from __future__ import annotations

from typing import Any

from headway.model.obj import Obj


def configmap(name: str, data: dict[str, str] | None = None, **meta: Any) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, **meta},
        "data": data or {},
    }


def deployment(
    name: str,
    *,
    image: str = "web:1",
    replicas: int = 1,
    labels: dict[str, str] | None = None,
    namespace: str = "default",
) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace, "labels": labels or {"app": name}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "main", "image": image}]},
            },
        },
    }


def owned_by(obj: Obj, owner: Obj, *, block: bool = False) -> Obj:
    """`obj` with an ownerReference to `owner` (which must carry its uid)."""
    ref = {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "blockOwnerDeletion": block,
    }
    obj["metadata"].setdefault("ownerReferences", []).append(ref)
    return obj
