"""Objects the kubeapi tests write."""

from __future__ import annotations

from headway.model.obj import Obj


def configmap(name: str, *, labels: dict[str, str] | None = None, **data: str) -> Obj:
    meta: Obj = {"name": name, "namespace": "default"}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}


def deployment(name: str, *, replicas: int = 1, image: str = "web:1") -> Obj:
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                         "spec": {"containers": [{"name": "app", "image": image}]}},
        },
    }


def widget_crd() -> Obj:
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com", "scope": "Namespaced",
            "names": {"kind": "Widget", "plural": "widgets", "singular": "widget",
                      "shortNames": ["wd"]},
            "versions": [{
                "name": "v1", "served": True, "storage": True,
                "schema": {"openAPIV3Schema": {"type": "object",
                                               "x-kubernetes-preserve-unknown-fields": True}},
                "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.size",
                                                         "statusReplicasPath": ".status.size"}},
                "additionalPrinterColumns": [
                    {"name": "Size", "type": "integer", "jsonPath": ".spec.size"}],
            }],
        },
    }
