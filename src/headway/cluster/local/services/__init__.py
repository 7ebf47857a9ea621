"""Services on the local machine: how Pods and people reach the Pods a Service selects.

`proxies` gives every Service port a loopback TCP proxy in front of its ready Pods (and
mirrors them into `Endpoints`); `names` is a per-namespace HTTP proxy set as every
container's `HTTP_PROXY`, so `http://<service>[.<namespace>[.svc...]]:<port>` works without
DNS.
"""
