"""Code that runs in other processes for the contract tests (must be importable there)."""

from __future__ import annotations

from pathlib import Path

import httpx2

from headway.clock import SystemClock
from headway.cluster.errors import Conflict
from headway.cluster.kube import KubeCluster
from headway.cluster.kube.transport import Transport
from headway.cluster.protocol import Cluster


def open_client(spec: tuple[str, str]) -> Cluster:
    backend, where = spec
    if backend == "local":
        from headway.cluster.local import LocalCluster

        return LocalCluster(Path(where), SystemClock())
    if backend == "kube":
        return open_kube(where)
    if backend == "kubeconfig":
        path, _, context = where.partition("|")
        return KubeCluster.connect(Path(path), context or None)
    raise ValueError(f"no worker client for backend {backend!r}")


def open_kube(url: str) -> KubeCluster:
    """The Kubernetes backend for an unauthenticated plain-HTTP server (the local API)."""
    return KubeCluster(Transport(httpx2.Client(base_url=url, timeout=30.0)))


def increment_and_create(spec: tuple[str, str], worker: int, increments: int,
                         creates: int) -> int:
    """Bump the shared counter `increments` times with optimistic concurrency, and create
    `creates` objects of its own; returns how many times a write was refused as stale."""
    cluster = open_client(spec)
    refused = 0
    for n in range(max(increments, creates)):
        if n < creates:
            cluster.apply(
                {"apiVersion": "v1", "kind": "ConfigMap",
                 "metadata": {"name": f"w{worker}-{n}", "labels": {"worker": str(worker)}}},
                field_manager=f"worker-{worker}",
            )
        while n < increments:
            live = cluster.get("v1", "ConfigMap", "counter")
            value = int(live["data"]["n"]) + 1
            try:
                cluster.apply(
                    {"apiVersion": "v1", "kind": "ConfigMap",
                     "metadata": {"name": "counter",
                                  "resourceVersion": live["metadata"]["resourceVersion"]},
                     "data": {"n": str(value)}},
                    field_manager="counter",
                )
                break
            except Conflict:
                refused += 1
    return refused
