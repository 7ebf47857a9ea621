"""The local store's write path on generated objects: every write either succeeds or raises
a `ClusterError` that names the problem; nothing else escapes, and what was stored reads
back unchanged."""

from __future__ import annotations

import contextlib
import datetime
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzz.shapes import JSONISH, TEXT, WRONG
from fuzz.test_entry_points_fuzz import core_object
from headway.clock import VirtualClock
from headway.cluster.errors import ClusterError, Invalid, NotFound
from headway.cluster.local.api.store import LocalCluster

OPERATIONS = st.sampled_from(["apply", "force-apply", "create", "update", "status", "delete"])


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    with (
        tempfile.TemporaryDirectory(prefix="headway-store-fuzz-") as tmp,
        LocalCluster(Path(tmp) / "cluster.db", VirtualClock()) as store,
    ):
        yield store


def _write(cluster: LocalCluster, operation: str, obj: Any, status: Any) -> None:
    """One write. Keys are strings, as the store's typed API and the REST paths give them;
    bodies are anything."""
    if operation in ("apply", "force-apply"):
        cluster.apply(obj, field_manager="fuzz", force=operation == "force-apply")
    elif operation == "create":
        cluster.create(obj)
    elif operation == "update":
        cluster.update(obj)
    else:
        key = _key(obj)
        if operation == "status":
            cluster.patch_status(*key, status)
        else:
            cluster.delete(*key)


def _key(obj: Any) -> tuple[str, str, str, str | None]:
    """The (apiVersion, kind, name, namespace) an object names, as strings."""
    fields = obj if isinstance(obj, dict) else {}
    meta = fields.get("metadata") if isinstance(fields.get("metadata"), dict) else {}
    namespace = meta.get("namespace")
    return (
        str(fields.get("apiVersion")),
        str(fields.get("kind")),
        str(meta.get("name")),
        None if namespace is None else str(namespace),
    )


@settings(max_examples=120)
@given(
    operations=st.lists(
        st.tuples(OPERATIONS, core_object() | WRONG, JSONISH), min_size=1, max_size=4
    )
)
def test_writes_succeed_or_raise_a_cluster_error(
    cluster: LocalCluster, operations: list[tuple[str, Any, Any]]
) -> None:
    for operation, obj, status in operations:
        try:
            _write(cluster, operation, obj, status)
        except ClusterError as err:
            assert str(err)
            continue
        if operation in ("apply", "force-apply", "create") and isinstance(obj, dict):
            try:
                stored = cluster.get(*_key(obj))
            except NotFound:  # deleted at once: it carried a deletionTimestamp and no finalizer
                continue
            assert stored["metadata"]["name"] == obj["metadata"]["name"]


@settings(max_examples=60)
@given(
    api_version=TEXT | st.sampled_from(["v1", "apps/v1", "argoproj.io/v1alpha1"]),
    kind=TEXT | st.sampled_from(["ConfigMap", "Deployment", "Rollout", "Namespace"]),
    name=TEXT,
    namespace=st.none() | TEXT,
    selector=st.none() | TEXT | st.dictionaries(TEXT, TEXT, max_size=2),
)
def test_reads_with_any_key_raise_only_cluster_errors(
    cluster: LocalCluster,
    api_version: str,
    kind: str,
    name: str,
    namespace: str | None,
    selector: str | dict[str, str] | None,
) -> None:
    with contextlib.suppress(ClusterError):
        cluster.get(api_version, kind, name, namespace)
    with contextlib.suppress(ClusterError):
        cluster.list(api_version, kind, namespace=namespace, label_selector=selector)


def test_a_status_that_is_not_json_is_invalid_and_names_the_field(cluster: LocalCluster) -> None:
    """Found by fuzzing: a status holding a date raised TypeError while being serialized."""
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "dated"}, "spec": {}}
    cluster.apply(service, field_manager="fuzz")
    status = {"loadBalancer": {"since": datetime.date(2024, 1, 2)}}
    with pytest.raises(Invalid) as raised:
        cluster.patch_status("v1", "Service", "dated", "default", status)
    assert str(raised.value) == (
        "Service dated: status: loadBalancer.since: date 2024-01-02 is not a JSON value "
        "(quote it)"
    )
