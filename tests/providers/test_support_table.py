"""The runtime refuses exactly what `model/support.py` lists, so validate and check cannot
drift from it."""

from __future__ import annotations

import httpx2
import pytest

from headway.clock import VirtualClock
from headway.cluster.local.api.kinds import BUILTIN_KINDS
from headway.model import support
from headway.providers.http_auth import UnsupportedAuth, auth_headers
from headway.providers.registry import default_registry


def test_registry_serves_the_supported_providers_and_no_others() -> None:
    registry = default_registry(httpx2.AsyncClient(), VirtualClock())
    expected = {
        *support.SUPPORTED_PROVIDERS,
        *(f"plugin:{name}" for name in support.SUPPORTED_PROVIDER_PLUGINS),
    }
    assert registry.keys == expected


@pytest.mark.parametrize("kind", support.UNSUPPORTED_AUTHENTICATION)
def test_http_auth_refuses_the_listed_authentication(kind: str) -> None:
    with pytest.raises(UnsupportedAuth, match=f"authentication.{kind}"):
        auth_headers("prometheus", {kind: {"region": "x"}}, insecure=False)


def test_local_cluster_serves_no_unsupported_argo_kind() -> None:
    served = {(row.api_version.rpartition("/")[0], row.kind) for row in BUILTIN_KINDS}
    assert not {("argoproj.io", kind) for kind in support.UNSUPPORTED_KINDS} & served
