"""Issue 11: the Kustomize base and the Helm chart install the same objects, and Headway's
own `validate` and `check` pass on both."""

from __future__ import annotations

import copy
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from install.conftest import DEPLOY, HELM_ONLY_LABELS, REPO, by_kind, helm, kustomize

ARGO_KINDS = {"Application", "ApplicationSet", "AppProject", "Rollout", "AnalysisTemplate",
              "ClusterAnalysisTemplate", "AnalysisRun", "Experiment"}
HEADWAY_KINDS = {"Promotion", "PromotionPipeline", "MultiClusterRollout"}


def _without_helm_labels(obj: dict[str, Any]) -> dict[str, Any]:
    obj = copy.deepcopy(obj)
    labels = obj["metadata"].get("labels") or {}
    for label in HELM_ONLY_LABELS:
        labels.pop(label, None)
    return obj


def _keyed(objects: list[dict[str, Any]]) -> dict[tuple[str, str, str], dict[str, Any]]:
    return {(o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]): o
            for o in objects}


def test_kustomize_and_helm_install_the_same_objects(
    kustomized: list[dict[str, Any]], helmed: list[dict[str, Any]]
) -> None:
    from_kustomize = _keyed(kustomized)
    from_helm = _keyed([_without_helm_labels(o) for o in helmed])
    assert sorted(from_helm) == sorted(from_kustomize)
    for key, obj in from_kustomize.items():
        assert from_helm[key] == obj, key


def test_the_install_holds_what_serve_needs(kustomized: list[dict[str, Any]]) -> None:
    kinds = {o["kind"] for o in kustomized}
    assert {"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Deployment",
            "Service", "CustomResourceDefinition"} <= kinds
    [deployment] = by_kind(kustomized, "Deployment")
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    assert container["args"][:2] == ["serve", "--in-cluster"]
    assert deployment["spec"]["replicas"] == 1
    assert deployment["spec"]["strategy"] == {"type": "Recreate"}
    [service] = by_kind(kustomized, "Service")
    assert service["spec"]["selector"].items() <= \
        deployment["spec"]["template"]["metadata"]["labels"].items()
    assert f"--metrics-port={service['spec']['ports'][0]['port']}" in container["args"]


def test_the_argo_crds_declare_argos_subresources(kustomized: list[dict[str, Any]]) -> None:
    crds = {c["spec"]["names"]["kind"]: c for c in by_kind(kustomized, "CustomResourceDefinition")}
    assert set(crds) == ARGO_KINDS | HEADWAY_KINDS
    [promotion] = crds["Promotion"]["spec"]["versions"]
    assert promotion["subresources"] == {"status": {}}
    [multicluster] = crds["MultiClusterRollout"]["spec"]["versions"]
    assert multicluster["subresources"] == {"status": {}}
    [rollout] = crds["Rollout"]["spec"]["versions"]
    assert rollout["subresources"]["scale"] == {
        "specReplicasPath": ".spec.replicas",
        "statusReplicasPath": ".status.HPAReplicas",
        "labelSelectorPath": ".status.selector",
    }
    [run] = crds["AnalysisRun"]["spec"]["versions"]
    assert run["subresources"] == {"status": {}}
    [experiment] = crds["Experiment"]["spec"]["versions"]
    assert experiment["subresources"] == {"status": {}}
    [appset] = crds["ApplicationSet"]["spec"]["versions"]
    assert appset["subresources"] == {"status": {}}
    assert crds["ClusterAnalysisTemplate"]["spec"]["scope"] == "Cluster"
    for crd in crds.values():
        [version] = crd["spec"]["versions"]
        assert version["schema"]["openAPIV3Schema"]["x-kubernetes-preserve-unknown-fields"]


def test_base_alone_installs_no_crds() -> None:
    """Where Argo CD / Argo Rollouts are installed, `deploy/base` leaves their CRDs alone."""
    assert not by_kind(kustomize(DEPLOY / "base"), "CustomResourceDefinition")


def test_helm_values_set_image_namespaces_and_resources() -> None:
    objects = helm({"image": {"repository": "registry.example/headway", "tag": "9.9"},
                    "appNamespaces": ["team-*", "/^ops-.*$/"],
                    "allowedScmProviders": ["https://ghe.example.com/", "https://ghe2.example"],
                    "resources": {"requests": {"cpu": "1"}}})
    [deployment] = by_kind(objects, "Deployment")
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "registry.example/headway:9.9"
    assert "--app-namespaces=team-*,/^ops-.*$/" in container["args"]
    allowed = "--allowed-scm-providers=https://ghe.example.com/,https://ghe2.example"
    assert allowed in container["args"]
    assert container["resources"]["requests"]["cpu"] == "1"  # merged over the defaults


def _headway(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "headway", *args], capture_output=True,
                          text=True, timeout=120, check=False, cwd=REPO)


def _written(objects: list[dict[str, Any]], path: Path) -> Path:
    path.mkdir()
    (path / "install.yaml").write_text(yaml.safe_dump_all(objects, sort_keys=False))
    return path


def test_validate_and_check_pass_on_both_renders(
    kustomized: list[dict[str, Any]], helmed: list[dict[str, Any]], tmp_path: Path
) -> None:
    for name, objects in (("kustomize", kustomized), ("helm", helmed)):
        rendered = _written(objects, tmp_path / name)
        for verb in ("validate", "check"):
            done = _headway(verb, str(rendered))
            assert done.returncode == 0, f"{verb} {name}:\n{done.stdout}{done.stderr}"


APPS = """\
apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: {name: platform, namespace: argocd}
spec:
  sourceRepos: ["*"]
  destinations: [{server: "https://kubernetes.default.svc", namespace: "*"}]
  clusterResourceWhitelist: [{group: "*", kind: "*"}]
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: headway-kustomize, namespace: argocd,
           finalizers: [resources-finalizer.argocd.argoproj.io]}
spec:
  project: platform
  source: {repoURL: "https://git.example/infra.git", path: deploy, targetRevision: HEAD}
  destination: {server: "https://kubernetes.default.svc", namespace: argocd}
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: headway-helm, namespace: argocd,
           finalizers: [resources-finalizer.argocd.argoproj.io]}
spec:
  project: platform
  source: {repoURL: "https://git.example/infra.git", path: deploy/helm/headway,
           targetRevision: HEAD}
  destination: {server: "https://kubernetes.default.svc", namespace: argocd}
"""


def test_check_passes_on_applications_that_install_headway(tmp_path: Path) -> None:
    """`headway check` renders both sources as `serve` would, and finds nothing to fix."""
    repo = tmp_path / "infra"
    shutil.copytree(DEPLOY, repo / "deploy")
    (repo / "apps").mkdir()
    (repo / "apps" / "headway.yaml").write_text(APPS)
    (repo / "headway-check.yaml").write_text("selfURLs: [https://git.example/infra.git]\n")
    done = _headway("check", str(repo), "--strict")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 Applications checked" in done.stdout


def test_more_replicas_are_standbys_named_by_their_pod() -> None:
    """Replicas elect a leader over a Lease, each named by its Pod (POD_NAME)."""
    [deployment] = by_kind(helm({"replicas": 2}), "Deployment")
    assert deployment["spec"]["replicas"] == 2
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    env = {e["name"]: e for e in container["env"]}
    assert env["POD_NAME"]["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.name"}}
