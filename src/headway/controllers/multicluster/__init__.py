"""One release across clusters: the `MultiClusterRollout` controller (docs/multi-cluster.md)."""
