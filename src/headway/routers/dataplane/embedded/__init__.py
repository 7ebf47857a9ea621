"""The embedded router: an asyncio HTTP/1.1 reverse proxy that needs nothing installed.

`router` is the proxy, `balancing` picks the destination and endpoint (pure), `exchange`
relays one request to one endpoint, `upstreams` keeps connections to them alive.
"""
