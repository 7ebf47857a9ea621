"""The `Cluster` protocol and its backends (the local runtime, Kubernetes)."""
