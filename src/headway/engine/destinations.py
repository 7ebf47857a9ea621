"""How an engine reaches the clusters Argo CD cluster Secrets register: the Kubernetes
backend, one client per destination (docs/kubernetes.md, multi-cluster)."""

from __future__ import annotations

from headway.cluster.cluster_secrets import ClusterSecret
from headway.cluster.protocol import Cluster

__all__ = ["connect_destination"]


def connect_destination(cluster: ClusterSecret) -> Cluster:
    """A Kubernetes API client for a registered destination (imported on first use, so an
    engine with only the in-cluster destination never loads the backend)."""
    from headway.cluster.kube import KubeCluster

    return KubeCluster.for_destination(cluster)
