"""Deleting an Application leaves its CustomResourceDefinitions and what Helm's
`helm.sh/resource-policy: keep` keeps, as Argo CD does (`shouldBeDeleted`: never a CRD, and
`keep` read as `Delete=false`). Found with argo-helm's argo-rollouts chart, whose CRDs carry
`keep`: deleting the Application that installed it deleted the CRDs, and with them every
Rollout of the cluster, where Argo CD leaves them."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_harness import APPS_NS, Harness, application, config_map, make_harness, manifests

from headway.clock import VirtualClock
from headway.cluster.errors import NotFound
from headway.controllers.app.controller import APP_API_VERSION

CRD_NAME = "gadgets.example.com"
CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": CRD_NAME},
    "spec": {
        "group": "example.com",
        "names": {"kind": "Gadget", "plural": "gadgets"},
        "scope": "Namespaced",
        "versions": [{"name": "v1", "served": True, "storage": True}],
    },
}


def _has_crd(h: Harness) -> bool:
    try:
        h.store.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", CRD_NAME, None)
    except NotFound:
        return False
    return True


def test_deleting_an_app_leaves_its_crds_and_what_helm_keeps(
    tmp_path: Path, clock: VirtualClock
) -> None:
    kept = config_map("settings", **{"helm.sh/resource-policy": "keep"})
    files = {"app/all.yaml": manifests(CRD, kept, config_map("scratch"))}
    h = make_harness(tmp_path, clock, files)
    app = application("platform", h.remote.url, path="app", automated={})
    app["metadata"]["finalizers"] = ["resources-finalizer.argocd.argoproj.io"]
    h.install(app)
    h.run("platform", lambda s: s["sync"]["status"] == "Synced")
    assert _has_crd(h)
    h.store.delete(APP_API_VERSION, "Application", "platform", APPS_NS)
    for _ in range(5):
        if h.step("platform") is None:
            break
    left = {
        "scratch": h.exists("ConfigMap", "scratch"),
        "settings (keep)": h.exists("ConfigMap", "settings"),
        "CRD": _has_crd(h),
    }
    assert left == {"scratch": False, "settings (keep)": True, "CRD": True}
    with pytest.raises(NotFound):
        h.app("platform")
