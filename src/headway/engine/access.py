"""What the engine's own controllers read and write on a cluster: the one table the install
manifests' RBAC is written from (`deploy/base/rbac.yaml`, the Helm chart's ClusterRole).

`REQUIRED_ACCESS` is what the controllers themselves touch, whatever the Applications hold:
Argo objects, the ReplicaSets, Services, Pods and AnalysisRuns of a Rollout, analysis Jobs,
Istio routes, Events, and the Secrets and ConfigMaps Argo CD keeps its settings in.
`SYNC_ACCESS` is separate: syncing an Application applies, reads and prunes whatever kinds its
manifests hold, which the engine cannot know in advance (Argo CD's application controller
holds the same grant); an administrator narrows it to the kinds their Applications deploy.

`python -m headway.engine.access` prints the ClusterRole rules of `REQUIRED_ACCESS` as YAML.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

__all__ = ["READ", "REQUIRED_ACCESS", "SYNC_ACCESS", "Access", "cluster_role_rules", "rules_yaml"]

READ = ("get", "list", "watch")
_APPLY = ("create", "patch")  # server-side apply: a PATCH that may create
_ARGO = "argoproj.io/v1alpha1"
_HEADWAY = "headway.dev/v1alpha1"


@dataclass(frozen=True)
class Access:
    """Verbs on one resource (or subresource, `rollouts/status`) of one API version, and why."""

    api_version: str
    kind: str
    resource: str
    verbs: tuple[str, ...]
    why: str

    @property
    def group(self) -> str:
        """The API group ("" for the core group `v1`)."""
        return self.api_version.rpartition("/")[0]


REQUIRED_ACCESS: tuple[Access, ...] = (
    Access(_ARGO, "Application", "applications", (*READ, *_APPLY, "update", "delete"),
           "served and written (operation, status in one PUT); --apps publishes and withdraws"),
    Access(_ARGO, "AppProject", "appprojects", (*READ, *_APPLY, "delete"),
           "each app's rules; --apps publishes and withdraws projects too"),
    Access(_ARGO, "Rollout", "rollouts", (*READ, "patch"),
           "reconciled; Git convergence marks a reverted rollout"),
    Access(_ARGO, "Rollout", "rollouts/status", ("update", "patch"), "status written once a step"),
    Access(_ARGO, "AnalysisRun", "analysisruns", (*READ, *_APPLY, "delete"),
           "created by a rollout's steps, terminated and cleaned up"),
    Access(_ARGO, "AnalysisRun", "analysisruns/status", ("update", "patch"),
           "measurements written by the analysis controller"),
    Access(_ARGO, "Experiment", "experiments", (*READ, *_APPLY),
           "run by the experiment controller; created and terminated by experiment steps"),
    Access(_ARGO, "Experiment", "experiments/status", ("update", "patch"),
           "phase, templates and runs written once a step"),
    Access(_ARGO, "AnalysisTemplate", "analysistemplates", READ, "a rollout's analysis"),
    Access(_ARGO, "ClusterAnalysisTemplate", "clusteranalysistemplates", READ,
           "a rollout's analysis (clusterScope)"),
    Access(_ARGO, "ApplicationSet", "applicationsets", READ,
           "generators and template of the Applications an ApplicationSet owns"),
    Access(_ARGO, "ApplicationSet", "applicationsets/status", ("update", "patch"),
           "conditions and applicationStatus written once a step"),
    Access("apps/v1", "ReplicaSet", "replicasets", (*READ, *_APPLY, "delete"),
           "a rollout's stable and canary ReplicaSets"),
    Access("apps/v1", "Deployment", "deployments", READ, "the pod template of a workloadRef"),
    Access("apps/v1", "Deployment", "deployments/scale", ("get", "update"),
           "a workloadRef's scaleDown (onsuccess, progressively)"),
    Access("v1", "Pod", "pods", (*READ, "update", "delete"),
           "availability; a restart deletes pods; per-role labels and annotations"),
    Access("v1", "Service", "services", (*READ, *_APPLY, "delete"),
           "canary/stable and active/preview selectors; experiment templates' Services"),
    Access("batch/v1", "Job", "jobs", (*READ, *_APPLY, "delete"),
           "the job analysis provider"),
    Access("networking.istio.io/v1beta1", "VirtualService", "virtualservices",
           (*READ, "update"), "canary weights: whole route lists replaced under a version"),
    Access("v1", "Event", "events", (*READ, *_APPLY),
           "events recorded on apps and rollouts; notifications read them"),
    Access("v1", "Secret", "secrets", READ,
           "repository credentials, cluster Secrets, analysis and notification secrets"),
    Access("v1", "ConfigMap", "configmaps", READ,
           "argocd-cm health scripts, argocd-notifications-cm"),
    Access("v1", "Namespace", "namespaces", (*READ, *_APPLY),
           "apps' destination namespaces; --apps creates the control namespace"),
    Access("coordination.k8s.io/v1", "Lease", "leases", ("get", *_APPLY, "update"),
           "leader election among replicas of serve (argocd/headway-controller)"),
    Access(_HEADWAY, "Promotion", "promotions", (*READ, *_APPLY),
           "stepped through their lifecycle; a success starts the next environment's"),
    Access(_HEADWAY, "Promotion", "promotions/status", ("update", "patch"),
           "each promotion's phase, commit and approval record"),
    Access(_HEADWAY, "MultiClusterRollout", "multiclusterrollouts", READ,
           "the order of clusters a release walks through"),
    Access(_HEADWAY, "MultiClusterRollout", "multiclusterrollouts/status", ("update", "patch"),
           "each cluster's stage of the release, the group rolling out, an abort"),
    Access(_HEADWAY, "PromotionPipeline", "promotionpipelines", READ,
           "a promotion's environments, gates and target files"),
)

SYNC_ACCESS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("*", "*", ("*",)),  # (apiGroup, resource, verbs) for what Applications deploy
)


def cluster_role_rules(table: tuple[Access, ...] = REQUIRED_ACCESS) -> list[dict[str, list[str]]]:
    """One RBAC rule per (group, verbs), the resources of each sorted, in table order."""
    merged: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for entry in table:
        resources = merged.setdefault((entry.group, tuple(sorted(entry.verbs))), [])
        if entry.resource not in resources:
            resources.append(entry.resource)
    return [
        {"apiGroups": [group], "resources": sorted(resources), "verbs": list(verbs)}
        for (group, verbs), resources in merged.items()
    ]


def rules_yaml(rules: list[dict[str, list[str]]]) -> str:
    """The rules as the `rules:` block of a ClusterRole (flow lists, as JSON writes them)."""
    lines = ["rules:"]
    for rule in rules:
        lines.append(f"  - apiGroups: {json.dumps(rule['apiGroups'])}")
        lines.append(f"    resources: {json.dumps(rule['resources'])}")
        lines.append(f"    verbs: {json.dumps(rule['verbs'])}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(rules_yaml(cluster_role_rules()))
