"""Traffic routing, in its two halves.

`control` is what the Rollout controller writes: a `TrafficRoutingReconciler` per mesh
(`control.istio` edits a VirtualService through the `Cluster`). `dataplane` is what moves
bytes: routers behind the `dataplane.protocol.TrafficRouter` protocol, `embedded` (an
asyncio reverse proxy that needs nothing installed) and `haproxy` (Debian's HAProxy through
its runtime API), both counting requests per pod-template hash (`dataplane.metrics`). The
two halves import nothing of each other. See docs/traffic-routing.md.
"""
