"""End to end: a Pod finds a Service through the variables Kubernetes gives it, and a
Service's named `targetPort` reaches the container that declares it, not only the first."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from cluster.local_runtime.harness import APP, running_runtime, service_url
from headway.model.obj import Obj
from polling import eventually

pytestmark = pytest.mark.slow

# Calls both ports of ledger-db by the variables alone, and prints what answered.
CLIENT = """\
import os, time, urllib.request
host = os.environ['LEDGER_DB_SERVICE_HOST']
for var in ('LEDGER_DB_SERVICE_PORT', 'LEDGER_DB_SERVICE_PORT_ADMIN'):
    url = f'http://{host}:{os.environ[var]}/'
    for _ in range(100):
        try:
            print(var, urllib.request.urlopen(url, timeout=2).read().decode().strip(), flush=True)
            break
        except OSError:
            time.sleep(0.2)
print('link', os.environ['LEDGER_DB_PORT_5432_TCP'], flush=True)
time.sleep(600)
"""


def ledger_db() -> list[Obj]:
    def server(name: str, version: str, port: Obj) -> Obj:
        return {"name": name, "image": "none", "command": [sys.executable, str(APP)],
                "env": [{"name": "VERSION", "value": version}], "ports": [port],
                "readinessProbe": {"httpGet": {"path": "/readyz", "port": port["name"]},
                                   "periodSeconds": 1}}

    pod: Obj = {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "ledger-db-0", "namespace": "default",
                     "labels": {"app": "ledger-db"}},
        "spec": {"terminationGracePeriodSeconds": 1, "containers": [
            server("db", "database", {"name": "pg", "containerPort": 5432}),
            server("admin", "admin-ui", {"name": "admin", "containerPort": 15000}),
        ]},
    }
    svc: Obj = {
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "ledger-db", "namespace": "default"},
        "spec": {"selector": {"app": "ledger-db"}, "ports": [
            {"name": "pg", "port": 5432, "targetPort": "pg"},
            {"name": "admin", "port": 9000, "targetPort": 15000},
        ]},
    }
    return [pod, svc]


def client() -> Obj:
    return {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "client", "namespace": "default"},
        "spec": {"terminationGracePeriodSeconds": 1, "containers": [
            {"name": "app", "image": "none", "command": [sys.executable, "-c", CLIENT]}]},
    }


async def test_a_pod_reaches_each_port_of_a_service_by_its_variables(tmp_path: Path) -> None:
    async with running_runtime(tmp_path) as runtime:
        for obj in ledger_db():
            runtime.cluster.apply(obj, field_manager="test")
        await eventually(lambda: service_url(runtime, "ledger-db"), what="the Service's ports")
        runtime.cluster.apply(client(), field_manager="test")
        log = tmp_path / "logs" / "default" / "client" / "app.log"

        def lines() -> list[str]:
            return log.read_text().splitlines() if log.exists() else []

        await eventually(lambda: len(lines()) >= 3, what=f"three lines in {log}")
        svc = runtime.cluster.get("v1", "Service", "ledger-db", "default")
        local = [p["port"] for p in svc["status"]["loadBalancer"]["ingress"][0]["ports"]]
        assert lines()[:3] == [
            "LEDGER_DB_SERVICE_PORT database ledger-db-0",
            "LEDGER_DB_SERVICE_PORT_ADMIN admin-ui ledger-db-0",
            f"link tcp://127.0.0.1:{local[0]}",
        ]
