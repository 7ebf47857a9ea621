"""What does checking writes against Kubernetes' schemas cost the local store?

Times, in the same run:

  check Pod / Deployment   SchemaCheck.problems on one object (compiled schema cached)
  create Pod               LocalCluster.create with the check  vs  with it switched off
  apply-update Pod         LocalCluster.apply changing the image, with vs without
  first use                importing jsonschema and compiling the Deployment schema

The best round of each side is compared: the figure least disturbed by other processes on
a shared machine. "With it switched off" replaces `schemas.builtin_check` by one that finds
no schema, so the only difference between the two stores is the check. Ratios above 1 are
the check's cost; on a busy machine the write's own noise can exceed it.

Run: .venv/bin/python bench/bench_schema_validation.py
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from _timing import per_call_us
from bench_store import pod
from headway.clock import SystemClock
from headway.cluster.local import LocalCluster
from headway.cluster.local.api import schemas

OBJECTS = 400
ROUNDS = 5


def deployment() -> dict[str, Any]:
    template = pod(0)
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
        "spec": {
            "replicas": 3, "selector": {"matchLabels": {"app": "web"}},
            "strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 0}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": template["spec"]},
        },
    }


@contextmanager
def checks_off() -> Iterator[None]:
    real = schemas.builtin_check
    schemas.builtin_check = lambda api_version, kind: None
    try:
        yield
    finally:
        schemas.builtin_check = real


def writes_per_second(path: Path) -> tuple[float, float]:
    """(creates/s, apply-updates/s) of OBJECTS Pods into a fresh store at `path`."""
    with LocalCluster(path, SystemClock()) as store:
        create = _rate(lambda: [store.create(pod(i), field_manager="b") for i in range(OBJECTS)])
        update = _rate(lambda: [store.apply(pod(i, "web:2"), field_manager="b")
                                for i in range(OBJECTS)])
    return create, update


def _rate(work: Callable[[], object]) -> float:
    start = time.perf_counter()
    work()
    return OBJECTS / (time.perf_counter() - start)


def first_use_ms() -> float:
    start = time.perf_counter()
    check = schemas.builtin_check("apps/v1", "Deployment")
    assert check is not None and "jsonschema" in sys.modules
    return (time.perf_counter() - start) * 1000


def main() -> None:
    first = first_use_ms()
    pod_check = schemas.builtin_check("v1", "Pod")
    deploy_check = schemas.builtin_check("apps/v1", "Deployment")
    assert pod_check is not None and deploy_check is not None
    sample_pod, sample_deployment = pod(1), deployment()
    assert pod_check.problems(sample_pod) == () and deploy_check.problems(sample_deployment) == ()
    pod_us = per_call_us(lambda: pod_check.problems(sample_pod), 1.0)
    deploy_us = per_call_us(lambda: deploy_check.problems(sample_deployment), 1.0)
    rates: dict[str, list[tuple[float, float]]] = {"create": [], "apply-update": []}
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(ROUNDS):  # interleaved, so a busy moment hits both sides alike
            checked = writes_per_second(Path(tmp) / f"checked-{n}.db")
            with checks_off():
                plain = writes_per_second(Path(tmp) / f"plain-{n}.db")
            rates["create"].append((checked[0], plain[0]))
            rates["apply-update"].append((checked[1], plain[1]))
    print(f"first use (import jsonschema, compile Deployment): {first:.0f} ms")
    print(f"check one Pod: {pod_us:.0f} us; one Deployment: {deploy_us:.0f} us (best of 5)")
    print(f"{OBJECTS} Pods per round, {ROUNDS} rounds; best round of each side:")
    for label, pairs in rates.items():
        best_checked = max(c for c, _ in pairs)
        best_plain = max(p for _, p in pairs)
        print(f"  {label:<13} {1e6 / best_checked:6.0f} us with check, "
              f"{1e6 / best_plain:6.0f} us without: {best_plain / best_checked:.2f}x")

if __name__ == "__main__":
    main()
