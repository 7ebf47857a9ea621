"""Issue 11 smoke test: the real kubectl applies the whole install to the local runtime's
Kubernetes API; the CRDs are created and served (api-resources lists the Argo kinds)."""

from __future__ import annotations

import json

from install.conftest import DEPLOY, by_kind, kustomize
from kubeapi.conftest import Kubectl, kubectl  # noqa: F401 (the runtime fixture)
from polling import wait_for


def test_kubectl_applies_the_install_and_serves_the_argo_kinds(
    kubectl: Kubectl,  # noqa: F811
) -> None:
    applied = kubectl("apply", "-k", str(DEPLOY))
    for obj in kustomize():  # "namespace/argocd created", one line per object
        assert f"{obj['kind'].lower()}" in applied.stdout.lower()
        assert f"/{obj['metadata']['name']} created" in applied.stdout, obj["metadata"]
    crds = json.loads(kubectl("get", "crd", "-o", "json").stdout)["items"]
    names = {c["metadata"]["name"] for c in crds}
    wanted = {c["metadata"]["name"] for c in by_kind(kustomize(), "CustomResourceDefinition")}
    assert wanted <= names

    groups = {name.split(".", 1)[1] for name in wanted}  # argoproj.io, headway.dev

    def served() -> set[str]:
        listed = [kubectl("api-resources", f"--api-group={g}", "-o", "name").stdout
                  for g in sorted(groups)]
        return {name for text in listed for name in text.split()}

    wait_for(lambda: served() >= wanted, timeout=30, what="api-resources lists the CRDs' kinds")
    [role] = json.loads(kubectl("get", "clusterrole", "headway-controller", "-o",
                                "json").stdout)["rules"][:1]
    assert role["apiGroups"] == ["argoproj.io"]
    kubectl("get", "deployment", "headway", "-n", "argocd")
    kubectl("get", "service", "headway-metrics", "-n", "argocd")
