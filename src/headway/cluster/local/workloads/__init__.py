"""The workload controllers of the local runtime: Deployments, ReplicaSets and Jobs.

Each is one step per call over the `Cluster` protocol, as Kubernetes' controllers are:
`deployments` (with the pure `deployment_math` and `deployment_conditions`),
`replicasets`, `jobs`, and `recorder` for their events. They create Pods and never run
them: the kubelet is a sibling layer, not a dependency.
"""
