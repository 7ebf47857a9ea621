"""HTTP clients for forges reached with their own TLS settings (`insecure`, `caRef`).

One client per distinct setting, so connections to a forge are pooled between steps; at most
`KEPT` of them, the least recently used closed first: every rotation of a `caRef` certificate
is a new setting, and a long-running controller must not keep a client (and its open
connections) for each certificate it ever saw.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

import httpx2

__all__ = ["KEPT", "TlsClients"]

KEPT = 8


class TlsClients:
    """`get(insecure, ca_pem)`: the client for that setting, made by `make` on first use."""

    def __init__(self, make: Callable[[bool, str], httpx2.Client], *, kept: int = KEPT) -> None:
        self._make = make
        self._kept = kept
        self._clients: OrderedDict[tuple[bool, str], httpx2.Client] = OrderedDict()

    def get(self, insecure: bool, ca_pem: str) -> httpx2.Client:
        key = (insecure, ca_pem)
        client = self._clients.get(key)
        if client is None:
            client = self._make(insecure, ca_pem)
            self._clients[key] = client
            while len(self._clients) > self._kept:
                _, evicted = self._clients.popitem(last=False)
                evicted.close()
        self._clients.move_to_end(key)
        return client
