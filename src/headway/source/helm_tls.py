"""TLS contexts for fetching charts: what a `type: helm` repository Secret and
`argocd-tls-certs-cm` say about TLS, as one `ssl.SSLContext` (None: Python's default).

* `insecure`: no certificate or host name verification.
* CAs (`ca_data`, PEM): trusted besides the system's CAs. (Argo CD trusts only them for that
  host; Headway keeps the system's too, so adding a CA never breaks a public repository.)
* A client certificate and key (`tlsClientCertData`, `tlsClientCertKey`, PEM): presented to
  the server. Python's `ssl` reads a client key only from a file, so the pair is written to a
  file readable by this user alone, in a directory of its own, loaded and removed at once.

A context is built once per distinct set of settings and reused; a malformed certificate,
key or CA is `ssl.SSLError`, whose message names no value.
"""

from __future__ import annotations

import os
import ssl
import tempfile
import threading
from pathlib import Path

from headway.source.git import GitCredentials

__all__ = ["TlsContexts", "build_context"]

_MAX_KEPT = 64  # contexts kept; a rotated certificate makes a new one
_Key = tuple[bool, str | None, str | None, str | None]


def build_context(
    *, insecure: bool, client_cert: str | None, client_key: str | None, ca_data: str | None
) -> ssl.SSLContext | None:
    """The context for these settings; None when all are unset (Python's default then)."""
    if not (insecure or client_cert or ca_data):
        return None
    context = ssl.create_default_context()
    if ca_data:
        context.load_verify_locations(cadata=ca_data)
    if insecure:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    if client_cert and client_key:
        _load_client_certificate(context, client_cert, client_key)
    return context


def _load_client_certificate(context: ssl.SSLContext, cert: str, key: str) -> None:
    with tempfile.TemporaryDirectory(prefix="headway-tls-") as directory:  # mode 0700
        path = Path(directory) / "client.pem"
        handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(f"{cert.strip()}\n{key.strip()}\n")
        context.load_cert_chain(path)


class TlsContexts:
    """`context(credentials, ca_data=...)`, built once per distinct settings; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._known: dict[_Key, ssl.SSLContext | None] = {}

    def context(
        self, credentials: GitCredentials | None, *, ca_data: str | None
    ) -> ssl.SSLContext | None:
        key: _Key = (
            bool(credentials and credentials.insecure_skip_tls_verify),
            credentials.tls_client_cert if credentials else None,
            credentials.tls_client_key if credentials else None,
            ca_data,
        )
        with self._lock:
            if key in self._known:
                return self._known[key]
        built = build_context(
            insecure=key[0], client_cert=key[1], client_key=key[2], ca_data=key[3]
        )
        with self._lock:
            if len(self._known) >= _MAX_KEPT:
                self._known.clear()
            self._known[key] = built
        return built
