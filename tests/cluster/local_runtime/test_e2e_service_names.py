"""End to end: a Pod's ordinary HTTP client reaches a Service by its cluster names through
the namespace's proxy the runtime sets in `HTTP_PROXY`; CONNECT tunnels to it; a cluster
name that names no Service is a 502 that says so."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from cluster.local_runtime.harness import APP, running_runtime, service_url
from headway.model.obj import Obj
from polling import eventually

pytestmark = pytest.mark.slow

# Fetches each URL in $URLS through whatever proxy the environment names; prints answers.
FETCH = """\
import os, time, urllib.error, urllib.request
print('proxy', os.environ.get('HTTP_PROXY', ''), flush=True)
for url in os.environ['URLS'].split():
    try:
        answer = urllib.request.urlopen(url, timeout=5).read().decode().strip()
    except urllib.error.HTTPError as err:
        answer = f'{err.code} {err.read().decode().strip()}'
    print(url, '->', answer, flush=True)
time.sleep(600)
"""

URLS = {
    "default": ["http://ledger-db:5432/", "http://ledger-db.default:5432/",
                "http://ledger-db.default.svc.cluster.local:5432/", "http://nope:80/",
                "http://ledger-db:9999/", "http://ledger-db-0.ledger-db:5432/"],
    "other": ["http://ledger-db.default:5432/", "http://ledger-db.default.svc:5432/",
              "http://ledger-db:5432/"],
}


def objects() -> list[Obj]:
    db: Obj = {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "ledger-db-0", "namespace": "default", "labels": {"app": "ledger"}},
        "spec": {"terminationGracePeriodSeconds": 1, "subdomain": "ledger-db", "containers": [{
            "name": "db", "image": "none", "command": [sys.executable, str(APP)],
            "env": [{"name": "VERSION", "value": "ledger"}],
            "ports": [{"name": "pg", "containerPort": 5432}],
            "readinessProbe": {"httpGet": {"path": "/readyz", "port": "pg"},
                               "periodSeconds": 1}}]},
    }
    svc: Obj = {"apiVersion": "v1", "kind": "Service",
                "metadata": {"name": "ledger-db", "namespace": "default"},
                "spec": {"selector": {"app": "ledger"},
                         "ports": [{"port": 5432, "targetPort": "pg"}]}}
    other: Obj = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}}
    return [db, svc, other]


def client(namespace: str) -> Obj:
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "client", "namespace": namespace},
        "spec": {"terminationGracePeriodSeconds": 1, "containers": [{
            "name": "app", "image": "none", "command": [sys.executable, "-c", FETCH],
            "env": [{"name": "URLS", "value": " ".join(URLS[namespace])}]}]},
    }


async def test_pods_reach_services_by_name_through_the_runtimes_proxy(tmp_path: Path) -> None:
    async with running_runtime(tmp_path) as runtime:
        for obj in objects():
            runtime.cluster.apply(obj, field_manager="test")

        def ready_endpoint() -> bool:
            endpoints = runtime.cluster.get("v1", "Endpoints", "ledger-db", "default")
            return bool(endpoints.get("subsets"))

        await eventually(lambda: service_url(runtime, "ledger-db") and ready_endpoint(),
                         what="ledger-db ready behind its Service")
        for namespace in URLS:
            runtime.cluster.apply(client(namespace), field_manager="test")

        def answers(namespace: str) -> list[str]:
            log = tmp_path / "logs" / namespace / "client" / "app.log"
            return log.read_text().splitlines() if log.exists() else []

        def all_answered() -> bool:
            return all(len(answers(ns)) == len(urls) + 1 for ns, urls in URLS.items())

        await eventually(all_answered, what="every answer in both namespaces")
        default = answers("default")
        assert default[1:] == [
            "http://ledger-db:5432/ -> ledger ledger-db-0",
            "http://ledger-db.default:5432/ -> ledger ledger-db-0",
            "http://ledger-db.default.svc.cluster.local:5432/ -> ledger ledger-db-0",
            'http://nope:80/ -> 502 no Service or Pod named "nope"',
            'http://ledger-db:9999/ -> 502 Service "default/ledger-db" has no port 9999 '
            "with a local address",
            "http://ledger-db-0.ledger-db:5432/ -> ledger ledger-db-0",
        ]
        assert answers("other")[1:] == [
            "http://ledger-db.default:5432/ -> ledger ledger-db-0",
            "http://ledger-db.default.svc:5432/ -> ledger ledger-db-0",
            'http://ledger-db:5432/ -> 502 no Service or Pod named "ledger-db"',
        ]
        proxy = default[0].removeprefix("proxy http://")
        assert await tunnel_get(proxy, "ledger-db:5432") == "ledger ledger-db-0"


async def tunnel_get(proxy: str, authority: str) -> str:
    """A plain GET through a CONNECT tunnel, as any TCP client that tunnels would send it."""
    host, port = proxy.split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(f"CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n\r\n".encode())
    established = await reader.readuntil(b"\r\n\r\n")
    assert established.startswith(b"HTTP/1.1 200")
    writer.write(b"GET / HTTP/1.1\r\nHost: ledger-db\r\nConnection: close\r\n\r\n")
    response = await reader.read()
    writer.close()
    return response.split(b"\r\n\r\n", 1)[1].decode().strip()
