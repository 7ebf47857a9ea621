"""The local mesh: Istio VirtualServices and Gateways in the store become real routers.

`virtual_services` and `gateways` sync the routers, `plan` and `gateway_plan` read what
the objects ask for (pure), `world` reads Services and their ready Pods, `status` writes
what the mesh did, and `plane` is the seam to the data-plane routers that carry traffic.
"""
