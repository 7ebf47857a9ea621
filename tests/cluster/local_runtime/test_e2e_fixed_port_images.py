"""End to end: programs that cannot read `PORT` run unwrapped, told their port on the command
line (`{port}` in the image map, or `$(PORT)` in the Pod's own args), and are reached through
a Service whose `targetPort` names the declared `containerPort`.

The program is Python's own `http.server`, which takes its port only as an argument: a
third-party server that would otherwise need a wrapper script.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from cluster.local_runtime.harness import (
    deployment,
    get_text,
    running_runtime,
    service,
    service_url,
)
from headway.cluster.local.services.proxies import service_ports
from headway.kube.pod_facts import is_ready
from headway.model.obj import Obj
from polling import eventually

pytestmark = pytest.mark.slow


def static_site(name: str, image: str, *, args: list[str] | None = None) -> Obj:
    """Two pods declaring `containerPort: 8080` named http, probed on it by name."""
    body = deployment(name, image, replicas=2, probe=False)
    container = body["spec"]["template"]["spec"]["containers"][0]
    container["ports"] = [{"name": "http", "containerPort": 8080}]
    container["readinessProbe"] = {"httpGet": {"path": "/", "port": "http"}, "periodSeconds": 1}
    if args is not None:
        container["args"] = args
    return body


async def serves_through_service(tmp_path: Path, body: Obj) -> None:
    async with running_runtime(tmp_path) as runtime:
        config = tmp_path / "headway-runtime.yaml"  # written by the harness; re-read on change
        (tmp_path / "index.html").write_text("static page\n")
        config.write_text(
            config.read_text().replace(
                "images:\n",
                "images:\n"
                "  vendor/static-server:\n"
                f"    command: [{sys.executable!r}, '-m', 'http.server']\n"
                "    args: ['{port}', '--bind', '127.0.0.1']\n"
                f"    workingDir: {str(tmp_path)!r}\n",
            )
        )
        site = service("site")
        site["spec"]["ports"] = [{"port": 80, "targetPort": "http"}]
        runtime.cluster.apply(body, field_manager="test")
        runtime.cluster.apply(site, field_manager="test")

        def ready() -> list[Obj]:
            pods = runtime.cluster.list("v1", "Pod", namespace="default")
            return [p for p in pods if is_ready(p)]

        pods = await eventually(lambda: len(ready()) == 2 and ready(), what="2 ready pods")
        ports = {p["metadata"]["annotations"]["headway.dev/port"] for p in pods}
        assert len(ports) == 2 and "8080" not in ports  # each its own port, not the fixed one
        url = await eventually(lambda: service_url(runtime, "site"), what="service address")
        for _ in range(4):
            assert await get_text(url + "index.html") == (200, "static page\n")


async def test_port_placeholder_in_the_image_map(tmp_path: Path) -> None:
    await serves_through_service(tmp_path, static_site("site", "vendor/static-server:1"))


async def test_port_reference_in_the_pods_own_args(tmp_path: Path) -> None:
    # The Pod replaces the image's args, and names the port the Kubernetes way.
    body = static_site("site", "vendor/static-server:1", args=["$(PORT)", "--bind", "127.0.0.1"])
    await serves_through_service(tmp_path, body)


# Answers "<which> <port>" on two ports: the app port from PORT_HTTP, the metrics port from
# the command line ({port:metrics} in the image map).
TWO_PORTS = """
import http.server, os, sys, threading

def serve(which, port):
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = ("%s %d" % (which, port)).encode()
            self.send_response(200)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        def log_message(self, *args):
            pass
    http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()

threading.Thread(target=serve, args=("metrics", int(sys.argv[1])), daemon=True).start()
serve("app", int(os.environ["PORT_HTTP"]))
"""


async def test_each_declared_port_is_its_own_local_port(tmp_path: Path) -> None:
    async with running_runtime(tmp_path) as runtime:
        config = tmp_path / "headway-runtime.yaml"
        (tmp_path / "two_ports.py").write_text(TWO_PORTS)
        config.write_text(
            config.read_text().replace(
                "images:\n",
                "images:\n"
                "  vendor/two-ports:\n"
                f"    command: [{sys.executable!r}, two_ports.py, '{{port:metrics}}']\n",
            )
        )
        body = deployment("svc", "vendor/two-ports:1", replicas=1, probe=False)
        container = body["spec"]["template"]["spec"]["containers"][0]
        container["ports"] = [
            {"name": "http", "containerPort": 8080},
            {"name": "metrics", "containerPort": 9090},
        ]
        # probed on the second port, by name: ready means that port answers too
        container["readinessProbe"] = {"httpGet": {"path": "/", "port": "metrics"},
                                       "periodSeconds": 1}
        site = service("svc")
        site["spec"]["ports"] = [
            {"name": "web", "port": 80, "targetPort": "http"},
            {"name": "metrics", "port": 9090, "targetPort": 9090},
        ]
        runtime.cluster.apply(body, field_manager="test")
        runtime.cluster.apply(site, field_manager="test")

        def ready() -> list[Obj]:
            return [p for p in runtime.cluster.list("v1", "Pod", namespace="default")
                    if is_ready(p)]

        pod = (await eventually(ready, what="a ready pod"))[0]
        ports = json.loads(pod["metadata"]["annotations"]["headway.dev/ports"])
        main = int(pod["metadata"]["annotations"]["headway.dev/port"])
        assert ports["http"] == ports["8080"] == main
        assert ports["metrics"] == ports["9090"] != main
        svc = await eventually(
            lambda: len(service_ports(runtime.cluster.get("v1", "Service", "svc", "default")))
            == 2 and runtime.cluster.get("v1", "Service", "svc", "default"),
            what="two service ports",
        )
        web, metrics = service_ports(svc)
        assert await get_text(f"http://127.0.0.1:{web}/") == (200, f"app {main}")
        assert await get_text(f"http://127.0.0.1:{metrics}/") == (200, f"metrics {ports['9090']}")
