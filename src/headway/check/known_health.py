"""Which kinds have a health assessment without a user-supplied Lua script.

A kind with no health assessment counts as Healthy the moment it exists, so a sync wave
holding it gates nothing. The built-in checks are `headway.health`'s registry; on top of them,
the custom resources Argo CD ships health scripts for (a repository checked here may be synced
by Argo CD). Keys are `group/Kind` (core group: `/Kind`).
"""

from __future__ import annotations

from headway.health.registry import BUILTIN_CHECKS

__all__ = ["BUILTIN_HEALTH_KINDS", "CORE_GROUPS", "DATA_KINDS", "is_custom_group"]

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

# Custom resources Argo CD ships Lua health scripts for, commonly found in these repositories.
_ARGO_CD_SHIPPED = frozenset(
    {
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

# Custom resources that are data, read by a controller later: nothing to wait for, so having
# no health check is right for them.
DATA_KINDS = frozenset(
    {
        "argoproj.io/AnalysisTemplate",
        "argoproj.io/ClusterAnalysisTemplate",
        "argoproj.io/AppProject",
    }
)

BUILTIN_HEALTH_KINDS = (
    frozenset(f"{g}/{k}" for g, k in BUILTIN_CHECKS) | _ARGO_CD_SHIPPED | DATA_KINDS
)


def is_custom_group(group: str) -> bool:
    return group not in CORE_GROUPS
