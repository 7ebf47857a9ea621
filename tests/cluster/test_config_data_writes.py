"""The local store's create and update (beyond the protocol's apply) check payloads too."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from cluster.contract.objects import configmap
from headway.clock import VirtualClock
from headway.cluster.errors import Invalid
from headway.cluster.local import LocalCluster


@pytest.fixture
def store(tmp_path: Path, clock: VirtualClock) -> Iterator[LocalCluster]:
    with LocalCluster(tmp_path / "store.db", clock) as cluster:
        yield cluster


def test_create_refuses_a_non_string_value(store: LocalCluster) -> None:
    with pytest.raises(Invalid, match=r"ConfigMap a: data\['port'\]: value must be a string"):
        store.create(configmap("a", {"port": 8080}))  # type: ignore[dict-item]


def test_update_refuses_bad_secret_base64(store: LocalCluster) -> None:
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
              "data": {"token": "dG9rZW4="}}
    store.create(secret)
    with pytest.raises(Invalid, match=r"Secret s: data\['token'\]: value is not valid base64"):
        store.update({**secret, "data": {"token": "token"}})
    assert store.get("v1", "Secret", "s", "default")["data"] == {"token": "dG9rZW4="}
