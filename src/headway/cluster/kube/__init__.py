"""The `Cluster` protocol over a Kubernetes API server (kube-apiserver, or the local
runtime's API), with lightkube's configuration loading. See docs/kubernetes.md."""

from headway.cluster.kube.cluster import KubeCluster

__all__ = ["KubeCluster"]
