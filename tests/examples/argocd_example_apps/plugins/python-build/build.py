"""Follows argocd-example-apps plugins/nix: the app's objects come out of a build, not out of
YAML files. Prints the guestbook's Deployment and Service as a YAML stream; the name comes
from the Application's plugin env (ARGOCD_ENV_OUTPUT) and the replica count from its
`replicas` parameter (PARAM_REPLICAS). Written for Headway's tests."""

from __future__ import annotations

import json
import os

name = os.environ.get("ARGOCD_ENV_OUTPUT") or "guestbook"
replicas = int(os.environ.get("PARAM_REPLICAS") or "1")
labels = {"app": name}
service = {
    "apiVersion": "v1",
    "kind": "Service",
    "metadata": {"name": name},
    "spec": {"selector": labels, "ports": [{"port": 80, "targetPort": 80}]},
}
container = {"name": name, "image": "example/guestbook:v1", "ports": [{"containerPort": 80}]}
deployment = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": name},
    "spec": {
        "replicas": replicas,
        "revisionHistoryLimit": 3,
        "selector": {"matchLabels": labels},
        "template": {"metadata": {"labels": labels}, "spec": {"containers": [container]}},
    },
}
# JSON is YAML: one object per document of the stream.
print("\n---\n".join(json.dumps(obj, indent=2) for obj in (service, deployment)))
