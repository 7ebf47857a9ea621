"""The local cluster's API: objects with Kubernetes semantics, stored in one SQLite file.

`store.LocalCluster` is the `Cluster` protocol over it; around it sit what a write passes
(`objects`, `schemas`, `preconditions`, `apply` with `fieldpaths` and `listkeys`), how it
is written (`database`, `writes`, `gc`), how it is read back (`paging`, `watching`,
`snapshots`, `scale`), which kinds exist (`kinds`), and `kubeapi/`, the same store served
as the Kubernetes REST API. The bottom layer of the local runtime: it imports no other part.
"""
