"""The `authentication` and `insecure` fields of prometheus and web metrics.

Headway sends `basicAuth` (as an `Authorization: Basic` header). It does not implement what
`model/support.py` lists — `sigv4`, `oauth2` and `insecure: true` (skipping TLS verification),
which validate and check report too; a metric that sets one is an Error saying so, rather than
a request sent without what the metric asked for.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

from headway.model import support

__all__ = ["UnsupportedAuth", "auth_headers"]


class UnsupportedAuth(ValueError):
    pass


def auth_headers(
    provider: str, authentication: Mapping[str, Any], *, insecure: bool
) -> dict[str, str]:
    """Headers carrying the metric's credentials; `UnsupportedAuth` for what Headway lacks."""
    if insecure:
        raise UnsupportedAuth(f"{provider}.insecure: skipping TLS verification is not supported")
    for kind in support.UNSUPPORTED_AUTHENTICATION:
        if authentication.get(kind):
            raise UnsupportedAuth(
                f"{provider}.authentication.{kind} is not supported by Headway (use basicAuth "
                "or a header)"
            )
    basic = authentication.get("basicAuth") or {}
    if not basic:
        return {}
    pair = f"{basic.get('username') or ''}:{basic.get('password') or ''}".encode()
    return {"Authorization": "Basic " + base64.b64encode(pair).decode()}
