"""The control plane of traffic routing: the objects the Rollout controller edits.

`reconciler` is the interface (Argo Rollouts' `TrafficRoutingReconciler`), `istio` its
Istio VirtualService implementation. Nothing here moves a byte of traffic.
"""
