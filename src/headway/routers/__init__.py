"""Traffic routers, one module each behind the `TrafficRouter` protocol.

`embedded.EmbeddedRouter` is an asyncio reverse proxy that needs nothing installed;
`haproxy.HAProxyRouter` drives Debian's HAProxy through its runtime API. Both count requests
per pod-template hash (`metrics`). See docs/traffic-routing.md.
"""
