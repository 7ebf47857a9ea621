"""Which kinds Argo CD can judge the health of without a user-supplied Lua script.

A kind with no health assessment counts as Healthy the moment it exists, so a sync wave
holding it gates nothing. This table is the fallback used until the `headway.health`
registry is consulted by the CLI; keys are `group/Kind` (core group: `/Kind`).
"""

from __future__ import annotations

__all__ = ["BUILTIN_HEALTH_KINDS", "CORE_GROUPS", "is_custom_group"]

# Kubernetes' own API groups: objects in them are not custom resources.
CORE_GROUPS = frozenset(
    {
        "",
        "apps",
        "batch",
        "autoscaling",
        "policy",
        "extensions",
        "networking.k8s.io",
        "rbac.authorization.k8s.io",
        "storage.k8s.io",
        "apiextensions.k8s.io",
        "admissionregistration.k8s.io",
        "apiregistration.k8s.io",
        "coordination.k8s.io",
        "scheduling.k8s.io",
        "discovery.k8s.io",
        "node.k8s.io",
        "certificates.k8s.io",
        "events.k8s.io",
        "flowcontrol.apiserver.k8s.io",
    }
)

# gitops-engine's built-in checks plus the custom resources Argo CD ships health scripts for
# that these repositories commonly contain.
BUILTIN_HEALTH_KINDS = frozenset(
    {
        "/Service",
        "/PersistentVolumeClaim",
        "/Pod",
        "apps/Deployment",
        "apps/StatefulSet",
        "apps/DaemonSet",
        "apps/ReplicaSet",
        "batch/Job",
        "autoscaling/HorizontalPodAutoscaler",
        "networking.k8s.io/Ingress",
        "extensions/Ingress",
        "apiregistration.k8s.io/APIService",
        "argoproj.io/Application",
        "argoproj.io/Rollout",
        "argoproj.io/AnalysisRun",
        "argoproj.io/Experiment",
        "argoproj.io/Workflow",
        "cert-manager.io/Certificate",
        "cert-manager.io/Issuer",
        "cert-manager.io/ClusterIssuer",
        "external-secrets.io/ExternalSecret",
        "keda.sh/ScaledObject",
        "monitoring.coreos.com/Prometheus",
        "monitoring.coreos.com/Alertmanager",
        "bitnami.com/SealedSecret",
    }
)


def is_custom_group(group: str) -> bool:
    return group not in CORE_GROUPS
