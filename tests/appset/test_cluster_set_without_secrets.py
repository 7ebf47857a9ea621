"""A set whose clusters generator selects no cluster Secret of the repository is said, not
passed over: of aws-samples/eks-blueprints-add-ons' 38 ApplicationSets (each a merge of
clusters generators selecting `enable_<addon>: 'true'`, on cluster Secrets Terraform registers),
`headway check` generated none and said nothing, a clean report for Applications it never saw.
The set here follows that shape in Headway's own words."""

from __future__ import annotations

from pathlib import Path

from headway.check.registry import run_checks
from headway.cli.check_loader import RepositoryLoader
from headway.model.diagnostics import Severity
from headway.source.tree import FilesystemTree

SET = """\
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: addon-metrics, namespace: argocd}
spec:
  generators:
    - merge:
        mergeKeys: [server]
        generators:
          - clusters:
              selector: {matchLabels: {enable_metrics: 'true'}}
              values: {chartVersion: 3.11.0}
          - clusters:
              selector: {matchLabels: {environment: prod}}
  template:
    metadata: {name: 'metrics-{{name}}'}
    spec:
      project: addons
      source:
        repoURL: https://charts.example/stable
        chart: metrics
        targetRevision: '{{values.chartVersion}}'
      destination: {server: '{{server}}', namespace: kube-system}
"""
CLUSTER = """\
apiVersion: v1
kind: Secret
metadata:
  name: edge-1
  namespace: argocd
  labels: {argocd.argoproj.io/secret-type: cluster, enable_metrics: 'true'}
stringData: {name: edge-1, server: 'https://edge-1.example:6443'}
"""


def _loader(root: Path) -> RepositoryLoader:
    return RepositoryLoader(tree=FilesystemTree(root), self_urls=frozenset())


def _findings(root: Path) -> list[tuple[str, Severity, int]]:
    context = _loader(root).load()
    return [(f.rule, f.severity, f.line) for f in run_checks(context) if f.rule.startswith("HW00")]


def test_a_clusters_set_that_generates_nothing_here_is_a_run_time_warning(tmp_path: Path) -> None:
    (tmp_path / "addons.yaml").write_text(SET)
    assert _findings(tmp_path) == [("HW004", Severity.WARNING, 5)]
    context = _loader(tmp_path).load()
    [finding] = [f for f in run_checks(context) if f.rule == "HW004"]
    assert finding.message.startswith(
        "spec.generators: generated no Application from this checkout: its clusters generator "
        "reads the cluster Secrets Argo CD holds, and this repository holds none that it selects"
    )


def test_with_a_cluster_secret_it_selects_the_set_is_generated_and_checked(
    tmp_path: Path,
) -> None:
    (tmp_path / "addons.yaml").write_text(SET)
    (tmp_path / "cluster.yaml").write_text(CLUSTER)
    context = _loader(tmp_path).load()
    assert [unit.name for unit in context.applications] == ["metrics-edge-1"]
    assert [f for f in run_checks(context) if f.rule == "HW004"] == []


def test_a_placeholder_left_in_the_repo_url_is_said_to_be_one(tmp_path: Path) -> None:
    """gitops-bridge's hack/exclude set pairs a list with `clusters: {}` (the local cluster,
    which has no annotations) and takes its repoURL from a cluster annotation: fasttemplate
    leaves `{{metadata.annotations.addons_repo_url}}` as written, as Argo CD does, and HW002
    said only that this URL was "neither this repository nor mapped to a local path"."""
    (tmp_path / "local.yaml").write_text(
        SET.replace(
            "    - merge:\n        mergeKeys: [server]\n        generators:\n",
            "    - matrix:\n        generators:\n          - list: {elements: [{addon: m}]}\n",
        )
        .replace(
            "          - clusters:\n              selector: {matchLabels: {enable_metrics: 'true'}}"
            "\n              values: {chartVersion: 3.11.0}\n"
            "          - clusters:\n              selector: {matchLabels: {environment: prod}}\n",
            "          - clusters: {}\n",
        )
        .replace("https://charts.example/stable", "'{{metadata.annotations.repo}}'")
    )
    context = _loader(tmp_path).load()
    [finding] = [f for f in run_checks(context) if f.rule == "HW002"]
    assert "'{{metadata.annotations.repo}}', which is neither this repository" in finding.message
    assert (
        "(an ApplicationSet placeholder left as written: the generator's parameters have no "
        "such key, and Argo CD would leave it too)" in finding.message
    )
