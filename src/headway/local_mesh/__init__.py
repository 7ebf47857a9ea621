"""The local runtime's mesh data planes built from Headway's routers.

The local runtime (`headway.cluster.local`) realizes VirtualServices and Istio Gateways
through a `DataPlanes` it is handed; this package provides one from the routers. It is
the one place that knows both the local backend and the routers, so the routers stay
backend-neutral (a Kubernetes cluster brings its own mesh) and the cluster layer never
imports a router.
"""
